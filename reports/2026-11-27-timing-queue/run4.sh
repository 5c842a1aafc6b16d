#!/usr/bin/env bash
# Device call 4: the 66 KernelBench-X candidates against eager, this tree, three timing-phase
# settings one after another (140 s each, same call): the default (a third of the lanes per phase,
# 2 s gathering), 8 units or 5 s, 12 units or 10 s. Units wait for their phase without a lane
# (--timing-queue), so longer gathering no longer idles lanes; fewer phases mean fewer drains.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device4.txt" 2>&1
kbx=$PWD/.bench/kbx
python3 benchmarks/throughput.py --previous .bench/prev --out /tmp/kbx4 --order this \
  --variant "batch8=--timing-batch 8 --timing-gather 5" --variant "batch12=--timing-batch 12 --timing-gather 10" \
  --limit "${LIMIT:-140}" -- --hw auto --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" --method geak \
  --baselines eager --task "$(cat "$kbx/tasks.txt")" > "$out/kbx4-throughput.log" 2>&1
cp /tmp/kbx4/summary.json "$out/kbx4-summary.json"
for s in this batch8 batch12; do python3 -m mkbench analyze engine --store /tmp/kbx4/$s.sqlite > "$out/kbx4-$s-engine.md" 2>&1; done
tar -czf "$out/kbx4-stores.tgz" --exclude='*-cache' --exclude='*-logs' -C /tmp kbx4
