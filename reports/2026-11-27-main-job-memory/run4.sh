#!/usr/bin/env bash
# Device call 4 (issue 28): the README main job's GPU run by this tree with the default memory budget
# (0.75 of the card) and with --memory-share SHARE (default 1.0), one after the other on the same
# device, each stopped at LIMIT s (benchmarks/throughput.py --variant). At most 8 files come back:
# device.txt, throughput.txt, summary.json, engine.md (both runs), gpu-util.csv, the two stores.
#   LIMIT=230 SHARE=1.0 bash reports/2026-11-27-main-job-memory/run4.sh     # carry .bench/prev (unused, required)
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
w=/tmp/throughput
share=${SHARE:-1.0}
mkdir -p "$out" "$w"
bash .ci/setup > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader -lms 1000 > "$out/gpu-util.csv" &
smi=$!
python3 benchmarks/throughput.py --previous .bench/prev --out "$w" --limit "${LIMIT:-230}" --order this \
  --variant "share=--memory-share $share" -- --hw auto --baselines eager --time-role large > "$out/throughput.txt" 2>&1
kill $smi 2>/dev/null
for l in this share; do python3 -m mkbench analyze engine --store "$w/$l.sqlite"; done > "$out/engine.md" 2>&1
cp "$w/summary.json" "$out/"
cp "$w/this.sqlite" "$out/default.sqlite"; cp "$w/share.sqlite" "$out/share-$share.sqlite"
cat "$out/throughput.txt"; grep -h "^engine:" "$out/engine.md"
