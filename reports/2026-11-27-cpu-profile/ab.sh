#!/usr/bin/env bash
# Issue 28: the previous main (PREV, a `git archive` of it) and this tree, one after the other on the
# same device, over the 30 tasks of run.sh (the main job's settings), by benchmarks/throughput.py.
#   TREE=<commit> PREV=.bench/prev bash reports/2026-11-27-cpu-profile/ab.sh      (carry .bench/prev)
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" results
echo "tree ${TREE:-unknown}; previous main $(cat "${PREV}/COMMIT" 2>/dev/null)" > "$out/tree.txt"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
py=$(bash .ci/setup 2>"$out/setup.log" | tail -1)
TASKS=elu,gelu,conv1d,conv2d_3x3,adaln_modulate_gate,add_layernorm,embedding,embedding_bag_sum,batched_inverse_small,cholesky,bce_with_logits,cross_entropy,atan2,bessel_i0,addmm_alpha_beta,bmm,batch_norm_inference,batch_norm_train,adagrad,adam_step,adaptive_avg_pool2d,avg_pool2d,dequantize_fp8_rowwise,dequantize_int8_per_channel,bernoulli_mask,categorical_sample,amax_lastdim,amax_middle_dim,grid_sample_bilinear,nchw_to_nhwc
timeout $((2 * ${AB_LIMIT:-200} + 60)) $py benchmarks/throughput.py --previous "$PREV" --out "$out/ab" --limit "${AB_LIMIT:-200}" -- \
  --hw auto --baselines eager --time-role large --task "$TASKS" > "$out/ab.log" 2>&1
tail -30 "$out/ab.log"
for s in "$out"/ab/*.sqlite; do $py -m mkbench analyze engine --store "$s" > "${s%.sqlite}-engine.md" 2>&1; done
cp "$out/ab/summary.json" "$out/ab-summary.json" 2>/dev/null
cd "$out" && tar czf ab.tgz --exclude='*-cache' ab && rm -rf ab
