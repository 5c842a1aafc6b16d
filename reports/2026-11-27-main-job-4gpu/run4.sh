#!/usr/bin/env bash
# Issue 28, fourth 4-GPU call: the README main job of call 3 (4 lanes per GPU, 212 units in 230 s of
# wall) carried on to the end with this tree's default lanes (HOST_LANES: 4 per GPU on 4 GPUs), from
# call 3's store (--resume; --adopt-store: its digest key stayed on the machine that wrote it), stopped
# at LIMIT s. At most 8 files come back: device.txt, main.log, engine.md, gpu-util.csv, main.sqlite,
# latest.md.
#   LIMIT=330 bash reports/2026-11-27-main-job-4gpu/run4.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" results
{ nvidia-smi --query-gpu=index,name,driver_version,persistence_mode,clocks.max.sm,memory.total --format=csv; nproc; } \
  > "$out/device.txt" 2>&1
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader -lms 2000 > "$out/gpu-util.csv" &
smi=$!
rm -f results/mkbench.sqlite*
cp reports/2026-11-27-main-job-4gpu/call3/main.sqlite results/mkbench.sqlite
start=$(date +%s.%N)
timeout -s TERM "${LIMIT:-330}" bash .ci/main --gpus all --resume --adopt-store > "$out/main.log" 2>&1
rc=$?
end=$(date +%s.%N)
for _ in $(seq 60); do pgrep -f "mkbench run" > /dev/null || break; sleep 1; done
kill $smi 2>/dev/null
echo "exit $rc, wall $(python3 -c "print(round($end-$start,1))") s (setup included), default lanes" >> "$out/main.log"
python3 -m mkbench analyze engine --store results/mkbench.sqlite > "$out/engine.md" 2>&1
python3 -c "import sqlite3; sqlite3.connect('results/mkbench.sqlite').execute('PRAGMA wal_checkpoint(TRUNCATE)')"
cp results/mkbench.sqlite "$out/main.sqlite"
cp results/latest.md "$out/" 2>/dev/null
tail -4 "$out/main.log"; grep "^engine:" "$out/engine.md"
