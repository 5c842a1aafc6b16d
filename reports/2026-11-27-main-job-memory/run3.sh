#!/usr/bin/env bash
# The README main job on every GPU of the machine (--gpus all), cut at LIMIT s, its evidence packed so
# that at most 8 files come back: device.txt, main-job.log, engine.md, and job.tgz (store, GPU
# utilisation, report). The signing keys stay on the machine.
#   LIMIT=420 bash reports/2026-11-27-main-job-memory/run3.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
w=/tmp/mainjob
mkdir -p "$out" "$w" results
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader -lms 1000 > "$w/gpu-util.csv" &
smi=$!
start=$(date +%s.%N)
timeout -s TERM "${LIMIT:-420}" bash .ci/main --gpus all > "$out/main-job.log" 2>&1
rc=$?
end=$(date +%s.%N)
kill $smi 2>/dev/null
echo "exit $rc, wall $(python3 -c "print(round($end-$start,1))") s (setup included)" >> "$out/main-job.log"
python3 -m mkbench analyze engine --store results/mkbench.sqlite > "$out/engine.md" 2>&1
cp results/mkbench.sqlite "$w/main-job.sqlite"; cp results/latest.md "$w/" 2>/dev/null
tar -czf "$out/job.tgz" -C "$w" .
tail -3 "$out/main-job.log"; head -3 "$out/engine.md"
