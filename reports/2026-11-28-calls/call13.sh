#!/usr/bin/env bash
# Call 13 on ONE GPU (issue 28): call 12 found the transfer area's faults; this tree mends them.
#  - a grown area in its old segment was read through the old mapping (key: handle, place, size)
#  - a process without a CUDA context crashed opening a handle (the GPU test's SIGSEGV)
#  - the judge out of memory while importing was read as a wrong answer (two references `hack`)
#  - the answers after timing went through the area all at once (workers at 1.28x their plan)
#  1. GPU tests: transfer area, judge export pool, import laps, adversarial suite (ipc), and the
#     adversarial suite again with --transfer area
#  2. the README main job's first LIMIT s: --transfer ipc (the default), then area
#   LIMIT=150 bash reports/2026-11-28-calls/call13.sh          # no carry needed; about 480 s
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
{ python3 -m pytest -q -p no:cacheprovider -rs tests/test_transfer_area.py tests/test_judge_export.py \
    tests/test_import_laps_gpu.py tests/test_adversarial_gpu.py; echo "exit $?";
  echo "## the adversarial suite with --transfer area";
  MKBENCH_TEST_TRANSFER=area python3 -m pytest -q -p no:cacheprovider -rs tests/test_adversarial_gpu.py; echo "exit $?";
} > "$out/gpu-tests.log" 2>&1
grep -h "passed\|failed\|^exit\|Fatal" "$out/gpu-tests.log"
python3 benchmarks/throughput.py --previous . --order this --variant area="--transfer area" --out /tmp/tp \
  --limit "${LIMIT:-150}" -- --hw auto --baselines eager --time-role large 2>&1 | tee "$out/throughput.log"
cp /tmp/tp/summary.json "$out/"
for label in this area; do
  { echo "## $label"; python3 -m mkbench analyze engine --store "/tmp/tp/$label.sqlite"; } >> "$out/engine.md" 2>&1
done
grep -h "^engine:\|^| judge \|^| candidates\|^| baselines" "$out/engine.md"
tar -czf "$out/throughput.tgz" --exclude='*-cache' -C /tmp tp
