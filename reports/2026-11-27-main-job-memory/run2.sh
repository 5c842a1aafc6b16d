#!/usr/bin/env bash
# Device call 2 (issue 28): the README main job's GPU run (Triton references against eager, large shapes
# timed) by the previous main (.bench/prev, carried) and by this tree, one after the other on the same
# device, each stopped at LIMIT s; units per second compared (benchmarks/throughput.py).
#   git archive 47a8424 core backends tasks hardware_profiles pyproject.toml setup.py README.md | tar -x -C .bench/prev
#   LIMIT=230 bash reports/2026-11-27-main-job-memory/run2.sh     # carry .bench/prev
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
w=/tmp/throughput
mkdir -p "$out" "$w"
bash .ci/setup > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader -lms 1000 > "$w/gpu-util.csv" &
smi=$!
python3 benchmarks/throughput.py --previous .bench/prev --out "$w" --limit "${LIMIT:-230}" -- \
  --hw auto --baselines eager --time-role large > "$out/throughput.txt" 2>&1
kill $smi 2>/dev/null
for l in previous this; do python3 -m mkbench analyze engine --store "$w/$l.sqlite" > "$w/$l-engine.md" 2>&1; done
cp "$w/summary.json" "$out/" 2>/dev/null
tar -czf "$out/stores.tgz" -C "$w" .
cat "$out/throughput.txt"; head -3 "$w/this-engine.md" "$w/previous-engine.md"
