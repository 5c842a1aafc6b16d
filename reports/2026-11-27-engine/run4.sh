#!/usr/bin/env bash
# Device call 4, on the merged tree (typed observations, Lane split, compile-ahead stage, timing
# phases): (1) the GPU tests: adversarial suite with honest controls run concurrently, allocator
# poisoning; (2) where a traced correctness run's seconds go ("trace cost" lines in the unit logs),
# 12 KernelBench-X candidates; (3) the 66 KernelBench-X candidates against eager, this tree then the
# previous main, same call.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" /tmp/tc
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device4.txt" 2>&1
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_adversarial_gpu.py tests/test_poison_gpu.py \
  --basetemp=/tmp/gputests 2>&1 | tail -30 > "$out/gpu-tests-call4.log"
kbx=$PWD/.bench/kbx
tasks=$(tr , '\n' < "$kbx/tasks.txt" | head -12 | paste -sd,)
timeout 90 python3 -m mkbench run --backend triton --hw auto --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" \
  --method geak --baselines eager --task "$tasks" --store /tmp/tc/trace-cost.sqlite --no-progress \
  > "$out/trace-cost-run.log" 2>&1
grep -rh "trace cost:" /tmp/tc/ > "$out/trace-cost.txt" 2>/dev/null
python3 benchmarks/throughput.py --previous .bench/prev --out /tmp/kbx4 --order this,previous \
  --limit "${LIMIT:-180}" -- --hw auto --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" --method geak \
  --baselines eager --task "$(cat "$kbx/tasks.txt")" > "$out/kbx4-throughput.log" 2>&1
cp /tmp/kbx4/summary.json "$out/kbx4-summary.json"
tar -czf "$out/kbx4-stores.tgz" --exclude='*-cache' -C /tmp kbx4 tc
