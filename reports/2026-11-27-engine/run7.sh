#!/usr/bin/env bash
# Device call 7: the merged tree, CUDA workers left unconfined after call 6 (issue 31): the GPU tests
# (adversarial suite with honest controls concurrently, allocator poisoning, isolation), then short
# confined runs of mkbench's Triton and CUDA references against eager, and 12 KernelBench-X
# candidates, each printing the confinement in force.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" /tmp/c7
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; git log -1 --format=%H; } \
  > "$out/device7.txt" 2>&1
for layer in none reaper landlock caps seccomp all; do
  timeout 60 python3 reports/2026-11-27-engine/cuda_sandbox_probe.py $layer >> "$out/cuda-sandbox-probe.txt" 2>&1
done
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_adversarial_gpu.py tests/test_poison_gpu.py \
  tests/test_isolation.py --basetemp=/tmp/gputests7 2>&1 | tail -30 > "$out/gpu-tests-call7.log"
refs=gelu,attention_scores_softmax,layer_norm,matmul,conv2d_bias_relu,cumsum,rmsprop,scatter_add_rows
timeout 80 python3 -m mkbench run --backend triton --hw auto --task "$refs" --time-role large --baselines eager \
  --store /tmp/c7/triton-confined.sqlite --no-progress > "$out/triton-call7.log" 2>&1
timeout 80 python3 -m mkbench run --backend cuda --hw auto --task gelu,matmul,sum_lastdim --time-role large \
  --baselines eager --store /tmp/c7/cuda-confined.sqlite --no-progress > "$out/cuda-call7.log" 2>&1
kbx=$PWD/.bench/kbx
tasks=$(tr , '\n' < "$kbx/tasks.txt" | head -12 | paste -sd,)
timeout 80 python3 -m mkbench run --backend triton --hw auto --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" \
  --method geak --baselines eager --task "$tasks" --store /tmp/c7/kbx-confined.sqlite --no-progress \
  > "$out/kbx-call7.log" 2>&1
tar -czf "$out/call7-stores.tgz" --exclude='*-cache' -C /tmp c6
