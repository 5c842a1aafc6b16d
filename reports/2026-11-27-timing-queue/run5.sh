#!/usr/bin/env bash
# Device call 5, a 4-GPU host: the 66 KernelBench-X candidates against eager, this tree, on one GPU
# (--gpus 0) then on all four (--gpus all), 150 s each, same call: scaling of units per second.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device5.txt" 2>&1
kbx=$PWD/.bench/kbx
python3 benchmarks/throughput.py --previous .bench/prev --out /tmp/kbx5 --order this \
  --variant "gpus4=--gpus all" --limit "${LIMIT:-150}" -- --hw auto --tasks-dir "$kbx/kbx_tasks" \
  --solutions "$kbx/kbx_sol" --method geak --baselines eager --task "$(cat "$kbx/tasks.txt")" --gpus 0 \
  > "$out/kbx5-throughput.log" 2>&1
cp /tmp/kbx5/summary.json "$out/kbx5-summary.json"
for s in this gpus4; do python3 -m mkbench analyze engine --store /tmp/kbx5/$s.sqlite > "$out/kbx5-$s-engine.md" 2>&1; done
tar -czf "$out/kbx5-stores.tgz" --exclude='*-cache' --exclude='*-logs' -C /tmp kbx5
