#!/usr/bin/env bash
# Issue 28 on a 4-GPU host, one device call: the README main job (`bash .ci/main`) on every GPU
# (--gpus all), stopped at LIMIT4 s (setup included), then the same job on GPU 0 alone for LIMIT1 s
# from a fresh store. Scaling is read from the two stores afterwards: units finished by the same
# elapsed time of the engine's clock (runs.started -> units.finished), setup excluded in both.
# At most 8 files come back: device.txt, main-4gpu.log, main-1gpu.log, engine.md (both runs),
# gpu-util.csv, main-4gpu.sqlite, main-1gpu.sqlite, latest.md. The signing keys stay on the machine.
#   LIMIT4=420 LIMIT1=110 bash reports/2026-11-27-main-job-4gpu/run.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" results
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader -lms 2000 > "$out/gpu-util.csv" &
smi=$!
job() {  # job NAME LIMIT [env...]: one main job from a fresh store
  local name=$1 limit=$2; shift 2
  rm -f results/mkbench.sqlite*
  local start end rc
  start=$(date +%s.%N)
  env "$@" timeout -s TERM "$limit" bash .ci/main --gpus all > "$out/$name.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  # timeout returns when .ci/main's shell has gone; the run under it may still be stopping its units
  for _ in $(seq 60); do pgrep -f "mkbench run" > /dev/null || break; sleep 1; done
  echo "exit $rc, wall $(python3 -c "print(round($end-$start,1))") s (setup included)" >> "$out/$name.log"
  { echo "## $name"; python3 -m mkbench analyze engine --store results/mkbench.sqlite; } >> "$out/engine.md" 2>&1
  python3 -c "import sqlite3; sqlite3.connect('results/mkbench.sqlite').execute('PRAGMA wal_checkpoint(TRUNCATE)')" 2>/dev/null
  cp results/mkbench.sqlite "$out/$name.sqlite" 2>/dev/null  # after the checkpoint: a copy without its WAL lost 55 units once
  tail -3 "$out/$name.log"
}
job main-4gpu "${LIMIT4:-420}"
cp results/latest.md "$out/" 2>/dev/null
job main-1gpu "${LIMIT1:-110}" CUDA_VISIBLE_DEVICES=0
kill $smi 2>/dev/null
grep -h "^engine:" "$out/engine.md"
