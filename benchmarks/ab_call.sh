#!/usr/bin/env bash
# One GPU device call of the engine's A/B kind (issue 28): GPU tests first where TESTS names them, then the README
# main job's first LIMIT s with this tree as it is ("this") and once per variant (LABEL="mkbench run args"), in
# the same call, with each store's engine table. A call's own script (reports/<date>-calls/callN.sh) says what it
# measures and calls this one; calls 8-13 wrote this skeleton out each time.
#   TESTS="tests/test_adversarial_gpu.py" LIMIT=150 bash benchmarks/ab_call.sh staged="--memory-hold staged"
# Writes to $OUT (else results/): device.txt, gpu-tests.log, throughput.log, summary.json, engine.md, throughput.tgz.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
if [ -n "${TESTS:-}" ]; then
  # shellcheck disable=SC2086  # TESTS is a list of pytest arguments
  { python3 -m pytest -q -p no:cacheprovider -rs $TESTS; echo "exit $?"; } > "$out/gpu-tests.log" 2>&1
  grep -h "passed\|failed\|^exit\|Fatal" "$out/gpu-tests.log"
fi
variants=() labels=(this)
for v in "$@"; do variants+=(--variant "$v"); labels+=("${v%%=*}"); done
python3 benchmarks/throughput.py --previous . --order this "${variants[@]}" --out /tmp/tp \
  --limit "${LIMIT:-150}" -- --hw auto --baselines eager --time-role large 2>&1 | tee "$out/throughput.log"
cp /tmp/tp/summary.json "$out/"
for label in "${labels[@]}"; do
  { echo "## $label"; python3 -m mkbench analyze engine --store "/tmp/tp/$label.sqlite"; } >> "$out/engine.md" 2>&1
done
grep -h "^engine:\|^| judge \|^| wait_memory\|^| candidates\|^| baselines" "$out/engine.md"
tar -czf "$out/throughput.tgz" --exclude='*-cache' -C /tmp tp
