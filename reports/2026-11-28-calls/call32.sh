#!/usr/bin/env bash
# Call 32 (not run yet: written in the eighth session, with no device time left; one H200; carry .bench/kbx): issue 28,
# a timing phase that defers for long checks and is given back when a check it drains for turns long
# (--timing-defer S; off by default), this tree's default against --timing-defer 30, on the KernelBench-X corpus
# (kbx-corpus.sh's run), LIMIT s each. Call 31 measured the first form (no give-back): it deferred 0.4 s in all.
#   LIMIT=200 bash reports/2026-11-28-calls/call32.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
kbx=$PWD/.bench/kbx
python3 benchmarks/throughput.py --previous . --order this --variant "defer=--timing-defer 30" --out /tmp/kbx \
  --limit "${LIMIT:-200}" -- --hw auto --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" --method geak \
  --baselines eager --task "$(cat "$kbx/tasks.txt")" > "$out/kbx-throughput.log" 2>&1
cp /tmp/kbx/summary.json "$out/kbx-summary.json"
for s in /tmp/kbx/*.sqlite; do python3 -m mkbench analyze engine --store "$s" > "$out/$(basename "${s%.sqlite}")-engine.md" 2>&1; done
tar -czf "$out/kbx-stores.tgz" --exclude='*-cache' -C /tmp kbx
tail -n 30 "$out/kbx-throughput.log"
