#!/usr/bin/env bash
# Issue 28: where the host's CPU goes during the main job. One device call: 30 tasks (the first two of
# each category) of the README main job (Triton references against eager, large shapes timed), under
# py-spy (every process the run forks, Python stacks, 40 samples/s) with the GPU's utilisation sampled
# beside it. The stacks are summed by role (compile-ahead worker, lane worker, judge, orchestrator)
# and by function by profile.py.
#   bash reports/2026-11-27-cpu-profile/run.sh        (device; carry .whl: py-spy's wheel)
#   python reports/2026-11-27-cpu-profile/profile.py reports/2026-11-27-cpu-profile/call1
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" results
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
echo "${TREE:-unknown}" > "$out/tree.txt"
py=$(bash .ci/setup 2>"$out/setup.log" | tail -1)
$py -m pip install -q --no-deps --target /tmp/pyspy .whl/py_spy-*.whl >> "$out/setup.log" 2>&1
spy=$(find /tmp/pyspy -name py-spy -type f | head -1)
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -lms 500 > "$out/gpu-util.csv" &
smi=$!
vmstat 1 > "$out/vmstat.txt" &
vm=$!
TASKS=elu,gelu,conv1d,conv2d_3x3,adaln_modulate_gate,add_layernorm,embedding,embedding_bag_sum,batched_inverse_small,cholesky,bce_with_logits,cross_entropy,atan2,bessel_i0,addmm_alpha_beta,bmm,batch_norm_inference,batch_norm_train,adagrad,adam_step,adaptive_avg_pool2d,avg_pool2d,dequantize_fp8_rowwise,dequantize_int8_per_channel,bernoulli_mask,categorical_sample,amax_lastdim,amax_middle_dim,grid_sample_bilinear,nchw_to_nhwc
start=$(date +%s.%N)
# stop the run (not py-spy) at LIMIT: mkbench ends its run on SIGTERM, and py-spy writes its stacks
( sleep "${LIMIT:-300}"; pkill -TERM -f "mkbench run --backend triton --hw auto --store results/prof" ) &
$spy record --subprocesses --rate 40 --format raw --output "$out/stacks.txt" -- \
  $py -m mkbench run --backend triton --hw auto --store results/prof.sqlite --no-progress \
  --baselines eager --time-role large --task "$TASKS" ${ARGS:-} > "$out/run.log" 2>&1
echo "exit $?, wall $(python3 -c "print(round($(date +%s.%N)-$start,1))") s" >> "$out/run.log"
kill $smi $vm 2>/dev/null
$py -m mkbench analyze engine --store results/prof.sqlite > "$out/engine.md" 2>&1
cp results/prof.sqlite "$out/" 2>/dev/null
gzip -f "$out/stacks.txt"
tail -3 "$out/run.log"; head -3 "$out/engine.md"; ls -la "$out"
