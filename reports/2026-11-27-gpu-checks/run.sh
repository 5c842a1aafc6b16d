#!/usr/bin/env bash
# One short device call (issue 29), after the main job with 8 compile workers found mkbench's own
# fp8_e4m3_quant_per_tensor reference `incorrect` on one tie (reports/2026-11-27-main-job-pool):
#  1. fp8_spacing.py on cuda: floor(log2(2^k)) on the device, and the fixed contract's E4M3 step at
#     every code and on the tie 8.5 (the same script with the previous contract: BEFORE=1 copy);
#  2. the stateful references before and after e4760de (reports/2026-11-27-stateful-gpu/run.sh), with
#     only KernelBench's VanillaRNN rows of CUDA-L1's h100 set (kb_l3_33, kb_l3_34);
#  3. mkbench validate --device cuda of the task on its large shape (eager positive, negative controls).
# Carry .bench/cudal1/h100.json and .bench/prev.   bash reports/2026-11-27-gpu-checks/run.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
here=reports/2026-11-27-gpu-checks
{ echo "== after (this tree)"; python3 $here/fp8_spacing.py cuda
  echo "== before (the contract of $(cat .bench/prev/COMMIT))"
  cp tasks/quantization/fp8_e4m3_quant_per_tensor.py /tmp/fp8.keep
  cp .bench/prev/tasks/quantization/fp8_e4m3_quant_per_tensor.py tasks/quantization/
  python3 $here/fp8_spacing.py cuda
  cp /tmp/fp8.keep tasks/quantization/fp8_e4m3_quant_per_tensor.py; } > "$out/fp8-spacing.txt" 2>&1
cat "$out/fp8-spacing.txt"
TASKS=kb_l3_33,kb_l3_34 DEADLINE=${DEADLINE:-110} OUT=/tmp/stateful bash reports/2026-11-27-stateful-gpu/run.sh
cp /tmp/stateful/compare.txt "$out/stateful-compare.txt"
tar -czf "$out/stateful.tgz" -C /tmp stateful  # stores, logs, import log, device.txt (the $OUT file limit)
timeout ${VALIDATE_LIMIT:-100} python3 -m mkbench validate --device cuda --task fp8_e4m3_quant_per_tensor --shape-role large \
  --summary "$out/fp8-validate.json" > "$out/fp8-validate.txt" 2>&1
echo "validate exit $?" >> "$out/fp8-validate.txt"
tail -3 "$out/fp8-validate.txt"
