#!/usr/bin/env bash
# The device call behind this folder (run from the repository root on the lent GPU machine, with the
# previous main's sources unpacked in .bench/prev: `git archive 1a5e33b core backends tasks
# hardware_profiles | tar -x -C .bench/prev`). Everything lands in $OUT.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$out/device.txt" 2>&1
nproc >> "$out/device.txt"
# 1. the allocator poisoning on the GPU
python3 -m pytest -q -p no:cacheprovider tests/test_poison_gpu.py 2>&1 | tee "$out/poison-gpu.log"
# 2. the 15 Triton references called `hack` on 4 shared H200s, and nll_loss_ignore_index (the decoy
#    one), large shapes timed against eager: the previous main, then this tree, default lanes
tasks=conv2d_bias_relu,conv3d,kmeans_assign,layernorm_linear,linear_gelu_tanh,linear_bias_relu,moe_softmax_topk_renorm
tasks=$tasks,sdpa_causal,rmsnorm_linear,router_aux_loss,swiglu_down_proj,batched_inverse_small,syrk,trsm,det_batched
tasks=$tasks,nll_loss_ignore_index
python3 benchmarks/throughput.py --previous .bench/prev --out /tmp/tp --limit "${LIMIT:-230}" -- \
  --hw auto --task "$tasks" --time-role large --baselines eager 2>&1 | tee "$out/throughput.log"
cp /tmp/tp/summary.json "$out/"
tar -czf "$out/throughput.tgz" --exclude='*-cache' -C /tmp tp
