#!/usr/bin/env bash
# Device call 6, the final tree (CUDA workers confined, units timed without a lane): the GPU
# adversarial suite (honest controls run concurrently) and the allocator poisoning test; then
# `mkbench validate --device cuda` on the two tasks the previous session left (issue 29).
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device6.txt" 2>&1
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/test_adversarial_gpu.py tests/test_poison_gpu.py \
  --basetemp=/tmp/gputests6 2>&1 | tail -30 > "$out/gpu-tests-call6.log"
grep -rh "^confinement:" /tmp/gputests6 2>/dev/null | sort | uniq -c > "$out/gpu-tests-confinement.txt"
timeout 130 python3 -m mkbench validate --device cuda --jobs 2 --task nll_loss_ignore_index --task power_iteration \
  > "$out/validate-cuda-call6.txt" 2> "$out/validate-cuda-call6-progress.txt"
echo "exit $?" >> "$out/validate-cuda-call6.txt"
