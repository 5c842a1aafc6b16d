#!/usr/bin/env bash
# Third device call, on a 4-GPU host: the README main job with --gpus all (one set of lanes and one
# exclusive timing lock per GPU, one store), stopped by `timeout` past MAIN_SECONDS.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total --format=csv > "$out/device.txt" 2>&1
nproc >> "$out/device.txt"
start=$SECONDS
timeout -k 15 "${MAIN_SECONDS:-460}" bash .ci/main --gpus all > "$out/main-job-4gpu.log" 2>&1
echo "main job, 4 GPUs: exit $?, $((SECONDS - start)) s" | tee -a "$out/main-job-4gpu.log"
python3 -m mkbench analyze engine --store results/mkbench.sqlite > "$out/main-job-4gpu-engine.md" 2>&1
cp results/mkbench.sqlite "$out/main-job-4gpu.sqlite"
tail -12 "$out/main-job-4gpu.log"; head -8 "$out/main-job-4gpu-engine.md"
