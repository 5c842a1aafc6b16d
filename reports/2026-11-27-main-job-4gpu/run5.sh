#!/usr/bin/env bash
# Issue 28, next 4-GPU call (not run yet): the lanes default (HOST_LANES = 16) was chosen from two points,
# 48 and 16 lanes. Three fresh main jobs on every GPU, each stopped at LIMIT s (setup included), to
# compare units finished at equal engine time (runs.started -> units.finished in each store):
#   default       16 lanes, timing batch 1 (a third of 4 lanes): 316 drains for 402 units in call 4
#   lanes6        --lanes 6 (24 lanes; timing batch 2)
#   batch2        --timing-batch 2 (16 lanes)
# At most 8 files come back: device.txt, runs.log, engine.md (all three), and the three stores.
#   LIMIT=170 bash reports/2026-11-27-main-job-4gpu/run5.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" results
bash .ci/setup > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,persistence_mode,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
job() {  # job NAME [extra mkbench run args...]
  local name=$1; shift
  rm -f results/mkbench.sqlite*
  local start=$(date +%s)
  timeout -s TERM "${LIMIT:-170}" bash .ci/main --gpus all "$@" >> "$out/runs.log" 2>&1
  local rc=$?
  for _ in $(seq 60); do pgrep -f "mkbench run" > /dev/null || break; sleep 1; done
  echo "$name: exit $rc, $(( $(date +%s) - start )) s, args: $*" | tee -a "$out/runs.log"
  { echo "## $name"; python3 -m mkbench analyze engine --store results/mkbench.sqlite; } >> "$out/engine.md" 2>&1
  python3 -c "import sqlite3; sqlite3.connect('results/mkbench.sqlite').execute('PRAGMA wal_checkpoint(TRUNCATE)')"
  cp results/mkbench.sqlite "$out/$name.sqlite"
}
job default
job lanes6 --lanes 6
job batch2 --timing-batch 2
grep -h "^engine:" "$out/engine.md"
