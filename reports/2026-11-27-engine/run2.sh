#!/usr/bin/env bash
# Device call 2: the same 66 KernelBench-X candidates against eager, three runs in one call:
# this tree (compile ahead in a quarter of the cores, timing batch 1), the previous main, and this
# tree with --timing-batch 4 (timing phases gathering units). Same carried .bench/ as run.sh.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$out/device2.txt" 2>&1
nproc >> "$out/device2.txt"
kbx=$PWD/.bench/kbx
python3 benchmarks/throughput.py --previous .bench/prev --out /tmp/kbx2 --order this,previous \
  --variant "batch4=--timing-batch 4" --limit "${LIMIT:-150}" -- --hw auto --tasks-dir "$kbx/kbx_tasks" \
  --solutions "$kbx/kbx_sol" --method geak --baselines eager --task "$(cat "$kbx/tasks.txt")" 2>&1 \
  | tee "$out/kbx2-throughput.log"
cp /tmp/kbx2/summary.json "$out/kbx2-summary.json"
tar -czf "$out/kbx2-stores.tgz" --exclude='*-cache' -C /tmp kbx2
