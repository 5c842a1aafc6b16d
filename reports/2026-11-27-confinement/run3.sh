#!/usr/bin/env bash
# Device call 3: CUDA workers confined (bd385a8 and later). (1) the GPU isolation test that failed
# in calls 7 and 2, alone, its unit logs kept; (2) mkbench's Triton references of 8 tasks against
# eager, confined; (3) the 66 KernelBench-X candidates against eager, confined then --no-confine,
# 150 s each, same call: verdicts and the cost of confinement.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" /tmp/c3
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device3.txt" 2>&1
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_isolation.py -k "illegal_address or fork_server" \
  --basetemp=/tmp/c3/iso 2>&1 | tail -30 > "$out/isolation-call3.log"
tar -czf "$out/isolation-logs.tgz" -C /tmp/c3 iso 2>/dev/null
refs=gelu,attention_scores_softmax,layer_norm,matmul,conv2d_bias_relu,cumsum,rmsprop,scatter_add_rows
timeout 100 python3 -m mkbench run --backend triton --hw auto --task "$refs" --time-role large --baselines eager \
  --store /tmp/c3/refs-confined.sqlite --no-progress > "$out/refs-confined.log" 2>&1
kbx=$PWD/.bench/kbx
python3 benchmarks/throughput.py --previous .bench/prev --out /tmp/c3/kbx --order this \
  --variant unconfined=--no-confine --limit "${LIMIT:-150}" -- --hw auto --tasks-dir "$kbx/kbx_tasks" \
  --solutions "$kbx/kbx_sol" --method geak --baselines eager --task "$(cat "$kbx/tasks.txt")" \
  > "$out/kbx3-throughput.log" 2>&1
cp /tmp/c3/kbx/summary.json "$out/kbx3-summary.json"
for s in this unconfined; do python3 -m mkbench analyze engine --store /tmp/c3/kbx/$s.sqlite > "$out/kbx3-$s-engine.md" 2>&1; done
tar -czf "$out/call3-stores.tgz" --exclude='*-cache' --exclude='*-logs' -C /tmp/c3 kbx refs-confined.sqlite
