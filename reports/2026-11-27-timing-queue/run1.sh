#!/usr/bin/env bash
# Device call 1: the 66 KernelBench-X candidates against eager, this tree (units waiting to be timed
# give their lane up) then the previous main (32ba66d, laid out in .bench/prev), 190 s each, same call.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; git log -1 --format=%H; } \
  > "$out/device1.txt" 2>&1
kbx=$PWD/.bench/kbx
python3 benchmarks/throughput.py --previous .bench/prev --out /tmp/kbx1 --order this,previous \
  --limit "${LIMIT:-190}" -- --hw auto --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" --method geak \
  --baselines eager --task "$(cat "$kbx/tasks.txt")" > "$out/kbx1-throughput.log" 2>&1
cp /tmp/kbx1/summary.json "$out/kbx1-summary.json"
for s in this previous; do python3 -m mkbench analyze engine --store /tmp/kbx1/$s.sqlite > "$out/kbx1-$s-engine.md" 2>&1; done
tar -czf "$out/kbx1-stores.tgz" --exclude='*-cache' --exclude='*-logs' -C /tmp kbx1
