#!/usr/bin/env bash
# mkbench validate on GPUs over every task (issue 29): eager on every shape, dtype and 2 seeds must
# pass each contract, every negative control must fail, inputs the same in two processes. One
# device call on a 4-GPU host: the tasks spread over the GPUs (--gpus all, 3 processes per GPU),
# the summary rewritten as each task finishes (so a call cut by its limit keeps what it did).
# Not run yet (written 2026-11-27, when this session's device time was spent).
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
timeout -s TERM "${LIMIT:-560}" python3 -m mkbench validate --device cuda --gpus all --jobs "${JOBS:-12}" \
  --summary "$out/summary.json" > "$out/validate.txt" 2> "$out/validate-progress.txt"
echo "exit $?" >> "$out/validate.txt"
tail -3 "$out/validate.txt"
