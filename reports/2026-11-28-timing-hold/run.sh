#!/usr/bin/env bash
# The timing hold made cheaper (issue 28): the first timed combination's inputs made before the hold,
# and no run-ahead spin for a call that waits for the device inside. One device call, against the
# previous main (a `git archive` of it in .bench/prev-main-timing; carry that folder):
#   git archive 684e29d | (mkdir -p .bench/prev-main-timing && tar -x -C .bench/prev-main-timing)
#   LIMIT=160 bash reports/2026-11-28-timing-hold/run.sh
# 1. the GPU tests of the timer and the adversarial suite (the same verdicts and evidence after the change);
# 2. the main job's 20 tasks with the most seconds in the timing hold on an H200 (reports/2026-11-28-main-job-1gpu,
#    Triton references and eager, large shapes timed), the previous main then this tree, LIMIT s each.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
timeout 170 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_timing.py tests/test_adversarial_gpu.py \
  --basetemp=/tmp/gpu-tests > "$out/gpu-tests.log" 2>&1
echo "exit $?" >> "$out/gpu-tests.log"
tasks=tridiagonal_solve,qr_householder,power_iteration,masked_select_compact,moe_permute,router_aux_loss
tasks=$tasks,batched_inverse_small,moe_grouped_gemm,grouped_gemm,embedding_bag_sum,det_batched,cholesky,adamw
tasks=$tasks,kmeans_assign,index_put_accumulate,layer_norm_backward,lu_nopivot,sdpa_gqa,roi_align,count_nonzero_rows
python3 benchmarks/throughput.py --previous "$PWD/.bench/prev-main-timing" --out /tmp/hold-ab --limit "${LIMIT:-160}" \
  -- --backend triton --hw auto --task "$tasks" --baselines eager --time-role large > "$out/ab.log" 2>&1
cp /tmp/hold-ab/summary.json "$out/summary.json"
for s in /tmp/hold-ab/*.sqlite; do python3 -m mkbench analyze engine --store "$s" > "${s%.sqlite}-engine.md" 2>&1; done
rm -rf /tmp/hold-ab/*-cache
tar -czf "$out/ab.tgz" --exclude="*-cache" -C /tmp hold-ab gpu-tests 2>/dev/null  # stores, logs, engine tables
tail -n 25 "$out/ab.log"
