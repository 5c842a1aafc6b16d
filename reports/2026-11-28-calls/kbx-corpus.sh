#!/usr/bin/env bash
# Not run yet (the sixth session of 2026-11-28 spent its device time on the portability matrix and the CUDA A/Bs),
# one H200: issue 28's corpus target
# (at least 50 Triton candidates that are not mkbench's, <= 2 s per kernel) on this tree alone. KernelBench-X's GEAK
# corpus, 66 candidates (reports/2026-11-27-engine/README.md says how .bench/kbx is imported); carry .bench/kbx.
#   LIMIT=150 bash reports/2026-11-28-calls/kbx-corpus.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
kbx=$PWD/.bench/kbx
python3 benchmarks/throughput.py --previous . --out /tmp/kbx --order this --limit "${LIMIT:-150}" -- --hw auto \
  --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" --method geak --baselines eager \
  --task "$(cat "$kbx/tasks.txt")" > "$out/kbx-throughput.log" 2>&1
cp /tmp/kbx/summary.json "$out/kbx-summary.json"
python3 -m mkbench analyze engine --store /tmp/kbx/this.sqlite > "$out/kbx-engine.md" 2>&1
tar -czf "$out/kbx-stores.tgz" --exclude='*-cache' -C /tmp kbx
tail -n 30 "$out/kbx-throughput.log"
