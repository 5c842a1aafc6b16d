#!/usr/bin/env bash
# One GPU (issue 28): the judge keeps its allocator's blocks between checks of one combination, its import
# timed in parts (43fc76e), against 8e72533 (call 10's tree: the judge emptied its cache after every check):
#  1. GPU tests: the adversarial suite (same verdicts after the judge's change) and the import's laps
#  2. the README main job's first LIMIT s, previous then this
#   git archive 8e72533 core backends tasks hardware_profiles | tar -x -C .bench/prev   # here, first
#   LIMIT=110 bash reports/2026-11-28-calls/call11.sh                                  # carry .bench/prev
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
python3 -m pytest -q -p no:cacheprovider -rs tests/test_adversarial_gpu.py tests/test_import_laps_gpu.py > "$out/gpu-tests.log" 2>&1
tail -3 "$out/gpu-tests.log"
python3 benchmarks/throughput.py --previous .bench/prev --out /tmp/tp --limit "${LIMIT:-110}" \
  -- --hw auto --baselines eager --time-role large 2>&1 | tee "$out/throughput.log"
cp /tmp/tp/summary.json "$out/"
for label in previous this; do
  { echo "## $label"; python3 -m mkbench analyze engine --store "/tmp/tp/$label.sqlite"; } >> "$out/engine.md" 2>&1
done
grep -h "^engine:\|^| judge" "$out/engine.md"
tar -czf "$out/throughput.tgz" --exclude='*-cache' -C /tmp tp
