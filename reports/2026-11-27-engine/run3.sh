#!/usr/bin/env bash
# Device call 3: (1) where a traced correctness run's seconds go (the "trace cost" line each traced
# call writes to its unit's log), on 12 KernelBench-X candidates; (2) issue 29: `mkbench validate
# --device cuda` over every task, one category at a time (each category's table is kept even if a
# later one runs out of time).
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$out/device3.txt" 2>&1
kbx=$PWD/.bench/kbx
tasks=$(tr , '\n' < "$kbx/tasks.txt" | head -12 | paste -sd,)
timeout 110 python3 -m mkbench run --backend triton --hw auto --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" \
  --method geak --baselines eager --task "$tasks" --store /tmp/tc/trace-cost.sqlite --no-progress \
  > "$out/trace-cost-run.log" 2>&1
grep -rh "trace cost:" /tmp/tc/trace-cost-logs > "$out/trace-cost.txt" 2>/dev/null
# every task, 6 at a time, large shapes included; one line per task as it finishes (kept if cut short)
timeout "${VALIDATE_S:-420}" python3 -m mkbench validate --device cuda --jobs 6 > "$out/validate-cuda.txt" \
  2> "$out/validate-cuda-progress.txt"; echo "exit $?" >> "$out/validate-cuda.txt"
