#!/usr/bin/env bash
# The README main job (`bash .ci/main`: every task's Triton reference against eager, workers confined),
# stopped at LIMIT s (setup included); RESUME=<store> goes on from an earlier call's store (--resume),
# KEYS=<folder> with the keys its rows were signed with (call N-1's keys/; a fresh machine has none);
# ARGS go to `mkbench run` (e.g. ARGS="--gpus all"). The job's wall is the sum of its calls' walls.
#   call 1: LIMIT=540 bash reports/2026-11-27-main-job-preload/run.sh
#   call N: RESUME=<call N-1's store> KEYS=<call N-1's keys> bash reports/2026-11-27-main-job-preload/run.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" results
echo "${TREE:-unknown}" > "$out/tree.txt"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
resume=()
if [ -n "${RESUME:-}" ]; then
  [ "$(realpath "$RESUME")" = "$(realpath results/mkbench.sqlite)" ] || cp "$RESUME" results/mkbench.sqlite
  resume=(--resume)
fi
if [ -n "${KEYS:-}" ]; then export MKBENCH_KEY_DIR=$(realpath "$KEYS"); fi
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader -lms 1000 > "$out/gpu-util.csv" &
smi=$!
start=$(date +%s.%N)
timeout -s TERM "${LIMIT:-540}" bash .ci/main "${resume[@]}" ${ARGS:-} > "$out/main-job.log" 2>&1
rc=$?
end=$(date +%s.%N)
kill $smi 2>/dev/null
echo "exit $rc, wall $(python3 -c "print(round($end-$start,1))") s (setup included)" >> "$out/main-job.log"
python3 -m mkbench analyze engine --store results/mkbench.sqlite > "$out/engine.md" 2>&1
cp results/mkbench.sqlite "$out/main-job.sqlite" 2>/dev/null
cp results/latest.md "$out/" 2>/dev/null
# the signing keys travel back for the next call only: never commit them (they would let anyone re-sign rows)
mkdir -p "$out/keys" && cp -r "${MKBENCH_KEY_DIR:-$HOME/.local/state/mkbench/keys}/." "$out/keys/" 2>/dev/null
tail -4 "$out/main-job.log"; head -3 "$out/engine.md"
