#!/usr/bin/env bash
# Call 16 on ONE GPU (issue 28; written 2026-11-28, third session, not run yet: the device time was spent).
# The memory hold staged (--memory-hold staged): a unit checks its small combinations on a small share of the
# budget and takes its whole share before its first large one, against one hold per unit (the default).
#  1. GPU tests: the adversarial suite with --memory-hold staged (the same verdicts and evidence)
#  2. the README main job's first LIMIT s: --memory-hold unit (the default), then staged
#   LIMIT=150 bash reports/2026-11-28-calls/call16.sh          # no carry needed; about 420 s
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
{ MKBENCH_TEST_RUN_ARGS="--memory-hold staged" python3 -m pytest -q -p no:cacheprovider -rs \
    tests/test_adversarial_gpu.py; echo "exit $?"; } > "$out/gpu-tests.log" 2>&1
grep -h "passed\|failed\|^exit\|Fatal" "$out/gpu-tests.log"
python3 benchmarks/throughput.py --previous . --order this --variant staged="--memory-hold staged" --out /tmp/tp \
  --limit "${LIMIT:-150}" -- --hw auto --baselines eager --time-role large 2>&1 | tee "$out/throughput.log"
cp /tmp/tp/summary.json "$out/"
for label in this staged; do
  { echo "## $label"; python3 -m mkbench analyze engine --store "/tmp/tp/$label.sqlite"; } >> "$out/engine.md" 2>&1
done
grep -h "^engine:\|^| judge \|^| wait_memory\|^| candidates\|^| baselines" "$out/engine.md"
tar -czf "$out/throughput.tgz" --exclude='*-cache' -C /tmp tp
