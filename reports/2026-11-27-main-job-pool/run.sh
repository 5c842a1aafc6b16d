#!/usr/bin/env bash
# The README main job (`bash .ci/main`: every task's Triton reference against eager, workers confined)
# on ONE GPU, the compile-ahead pool sized by EXTRA (e.g. EXTRA="--compile-workers 8"), across device
# calls: each call goes on from the last one's store (--resume), stopped at
# LIMIT s (default 540, setup included). The job's wall time is the sum of the calls' walls; each
# call's engine table comes from its own run in the store (`mkbench analyze engine`).
#   call 1: bash reports/2026-11-27-main-job-pool/run.sh
#   call N: RESUME=reports/2026-11-27-main-job-pool/callN-1/main-job-1gpu.sqlite bash reports/2026-11-27-main-job-pool/run.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" results
echo "tree ${TREE:-unknown}; extra: ${EXTRA:-none}" > "$out/tree.txt"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
resume=()
if [ -n "${RESUME:-}" ]; then cp "$RESUME" results/mkbench.sqlite && resume=(--resume); fi
start=$(date +%s.%N)
timeout -s TERM "${LIMIT:-540}" bash .ci/main "${resume[@]}" ${EXTRA:-} > "$out/main-job.log" 2>&1
rc=$?
end=$(date +%s.%N)
echo "exit $rc, wall $(python3 -c "print(round($end-$start,1))") s (setup included)" >> "$out/main-job.log"
python3 -m mkbench analyze engine --store results/mkbench.sqlite > "$out/engine.md" 2>&1
cp results/mkbench.sqlite "$out/main-job-1gpu.sqlite" 2>/dev/null
cp results/latest.md "$out/" 2>/dev/null
tail -4 "$out/main-job.log"
