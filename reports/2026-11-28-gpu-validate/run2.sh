#!/usr/bin/env bash
# Second call (issue 29): the tasks the first call left with a problem or cut short, validated again
# alone on one GPU (--jobs 1): nll_loss_ignore_index (out of GPU memory with 3 tasks per GPU, and its
# retry alone never ran: the call's time limit came first) and power_iteration (421 s in the first
# call; its float64 ground truth is now repeated squaring, not torch.linalg.eigh).
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device2.txt" 2>&1
timeout -s TERM "${LIMIT:-240}" python3 -m mkbench validate --device cuda --gpus all --jobs 1 \
  --task nll_loss_ignore_index --task power_iteration ${TASKS:-} \
  --summary "$out/summary2.json" > "$out/validate2.txt" 2> "$out/validate2-progress.txt"
echo "exit $?" >> "$out/validate2.txt"
tail -4 "$out/validate2.txt"
