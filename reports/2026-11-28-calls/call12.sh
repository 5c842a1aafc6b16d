#!/usr/bin/env bash
# Next call on ONE GPU (not run yet; issue 28): what 2026-11-28's second session committed after its
# device time was spent.
#  1. GPU tests: the transfer area across processes, the judge's copies for a worker in their own pool,
#     the import's laps, and the adversarial suite (the same verdicts with either transfer)
#  2. the README main job's first LIMIT s: this tree with --transfer ipc (the default), then area, then area
#     with 8 units per timing phase instead of 4 (each phase drains every lane's checks: 17 phases drained
#     11.5 s and held 20 s of call 11's 97 s)
#   LIMIT=120 bash reports/2026-11-28-calls/call12.sh          # no carry needed; about 500 s
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
python3 -m pytest -q -p no:cacheprovider -rs tests/test_transfer_area.py tests/test_judge_export.py \
  tests/test_import_laps_gpu.py tests/test_adversarial_gpu.py > "$out/gpu-tests.log" 2>&1
tail -3 "$out/gpu-tests.log"
python3 benchmarks/throughput.py --previous . --order this --variant area="--transfer area" \
  --variant area_b8="--transfer area --timing-batch 8" --out /tmp/tp \
  --limit "${LIMIT:-120}" -- --hw auto --baselines eager --time-role large 2>&1 | tee "$out/throughput.log"
cp /tmp/tp/summary.json "$out/"
for label in this area area_b8; do
  { echo "## $label"; python3 -m mkbench analyze engine --store "/tmp/tp/$label.sqlite"; } >> "$out/engine.md" 2>&1
done
grep -h "^engine:\|^| judge" "$out/engine.md"
tar -czf "$out/throughput.tgz" --exclude='*-cache' -C /tmp tp
