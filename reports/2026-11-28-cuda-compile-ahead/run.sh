#!/usr/bin/env bash
# Issue 28: CUDA candidates' compile ahead (522094b) against the previous main (7b580da), one after the other in one
# device call, on 30 tasks of CUDA-L1's h20 set (tasks.txt: the 11 whose first traced call took over 4 s on an H100
# in calls 17 and 19, the builds made lazily in forward, and 19 more drawn with seed 11), eager baselines, timed on
# the large shape. Carry .bench/prev-main (git archive 7b580da core backends tasks hardware_profiles), .bench/x4/tasks
# and .bench/x4/sol-h20 (imported on a CPU: reports/2026-11-28-cuda-l1/run_x4b.sh).
#   LIMIT=220 bash reports/2026-11-28-cuda-compile-ahead/run.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
x4=$PWD/.bench/x4
tasks=$(paste -sd, reports/2026-11-28-cuda-compile-ahead/tasks.txt)
# this tree first: whatever the machine warms (the page cache, nvcc's files) favours the previous main
python3 benchmarks/throughput.py --previous .bench/prev-main --out "$out/ab" --limit "${LIMIT:-220}" \
  --order "${ORDER:-this,previous}" -- --backend cuda --hw auto --tasks-dir "$x4/tasks" --solutions "$x4/sol-h20" \
  --method cuda-l1-h20 --task "$tasks" --baselines eager --time-role large --gpus all > "$out/ab.log" 2>&1
echo "throughput.py: exit $?" >> "$out/ab.log"
for s in "$out"/ab/*.sqlite; do python3 -c "import sqlite3; sqlite3.connect('$s').execute('PRAGMA wal_checkpoint(TRUNCATE)')"; done
rm -rf "$out"/ab/*-cache
tar -czf "$out/unit-logs.tgz" -C "$out/ab" $(cd "$out/ab" && ls -d ./*-logs 2>/dev/null) 2>/dev/null && rm -rf "$out"/ab/*-logs
for s in "$out"/ab/*.sqlite; do python3 -m mkbench analyze engine --store "$s" > "${s%.sqlite}-engine.md" 2>&1; done
tail -40 "$out/ab.log"
