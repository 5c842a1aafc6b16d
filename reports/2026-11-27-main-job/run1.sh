#!/usr/bin/env bash
# Device call 1, a 4-GPU host: the README main job (`bash .ci/main`, every task's Triton reference
# against eager, workers confined by default) with --gpus all, stopped at ${LIMIT:-540} s.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; git rev-parse HEAD 2>/dev/null; } > "$out/device1.txt" 2>&1
start=$(date +%s.%N)
timeout -s TERM "${LIMIT:-540}" bash .ci/main --gpus all > "$out/main-job-4gpu.log" 2>&1
rc=$?
end=$(date +%s.%N)
echo "exit $rc, wall $(python3 -c "print(round($end-$start,1))") s (setup included)" >> "$out/main-job-4gpu.log"
python3 -m mkbench analyze engine --store results/mkbench.sqlite > "$out/main-job-4gpu-engine.md" 2>&1
cp results/mkbench.sqlite "$out/main-job-4gpu.sqlite" 2>/dev/null
cp results/latest.json results/latest.md "$out/" 2>/dev/null
tail -5 "$out/main-job-4gpu.log"
