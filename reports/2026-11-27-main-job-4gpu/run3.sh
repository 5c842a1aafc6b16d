#!/usr/bin/env bash
# Issue 28, third 4-GPU call: does device memory taken from and given back to the driver serialize
# across processes as the CUDA start does (cuda_init_probe.py alloc), and does the main job on 4 GPUs
# go faster with fewer lanes per GPU (--lanes LANES, default 4: 16 lanes where call 1 had 48),
# stopped at LIMIT s (setup included) and compared with call 1 at the same elapsed time.
# At most 8 files come back: device.txt, alloc.json, main.log, engine.md, gpu-util.csv, main.sqlite.
#   LANES=4 LIMIT=230 bash reports/2026-11-27-main-job-4gpu/run3.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" results
bash .ci/setup > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,persistence_mode,clocks.max.sm,memory.total --format=csv; nproc; } \
  > "$out/device.txt" 2>&1
timeout 90 python3 reports/2026-11-27-main-job-4gpu/cuda_init_probe.py alloc > "$out/alloc.json" 2>&1
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader -lms 2000 > "$out/gpu-util.csv" &
smi=$!
rm -f results/mkbench.sqlite*
start=$(date +%s.%N)
timeout -s TERM "${LIMIT:-230}" bash .ci/main --gpus all --lanes "${LANES:-4}" > "$out/main.log" 2>&1
rc=$?
end=$(date +%s.%N)
for _ in $(seq 60); do pgrep -f "mkbench run" > /dev/null || break; sleep 1; done
kill $smi 2>/dev/null
echo "exit $rc, wall $(python3 -c "print(round($end-$start,1))") s (setup included), --lanes ${LANES:-4}" >> "$out/main.log"
python3 -m mkbench analyze engine --store results/mkbench.sqlite > "$out/engine.md" 2>&1
python3 -c "import sqlite3; sqlite3.connect('results/mkbench.sqlite').execute('PRAGMA wal_checkpoint(TRUNCATE)')"
cp results/mkbench.sqlite "$out/main.sqlite"
cat "$out/alloc.json" | head -40; tail -3 "$out/main.log"; head -30 "$out/engine.md"
