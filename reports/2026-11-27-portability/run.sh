#!/usr/bin/env bash
# The five-backend portability matrix (issue 30, part 2), not yet run: every reference kernel of
# each backend on one GPU, the large shapes timed against eager, then the matrix
# (`mkbench analyze portability`, summary.json) and the report.
#
# Device call (carry .whl: pyopencl for sycl, see ../shared/device/README.md):
#   bash reports/2026-11-27-portability/run.sh
# CUDA, Pallas, SYCL and HIP run here, one after another into one store, within one deadline
# (DEADLINE seconds, default 540). A backend cut off goes on where it stopped in a later call with
# STORES a folder in the working tree holding the earlier calls' store (--resume). Triton's references are the README
# main job's (`bash .ci/main`, results/mkbench.sqlite): pass that store as TRITON_STORE, or add
# triton to BACKENDS.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
stores_dir=${STORES:-$out}
mkdir -p "$out" "$stores_dir"
[ -f .whl/gpu-env.sh ] && source .whl/gpu-env.sh > "$out/gpu-env.txt" 2>&1  # pyopencl + NVIDIA's OpenCL ICD
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; git rev-parse HEAD 2>/dev/null; } \
  > "$out/device.txt" 2>&1
# One store for the four backends: eager is measured once per (task, shape, dtype) and the later
# backends reuse it (the store's baseline cache), so every backend is compared with the same eager.
# The backends share one deadline (DEADLINE seconds from here): each gets what the earlier left.
deadline=$(( $(date +%s) + ${DEADLINE:-540} ))
for B in ${BACKENDS:-cuda pallas sycl hip}; do
  start=$(date +%s)
  left=$(( deadline - start ))
  [ "$left" -lt 20 ] && { echo "$B: not run, the deadline was reached" > "$out/$B.log"; continue; }
  timeout -s TERM "$left" python3 -m mkbench run --backend "$B" --hw auto --baselines eager \
    --time-role large --gpus all --store "$stores_dir/matrix.sqlite" --resume --no-progress > "$out/$B.log" 2>&1
  echo "exit $?, $(( $(date +%s) - start )) s" >> "$out/$B.log"
  tail -3 "$out/$B.log"
done
[ "$stores_dir" != "$out" ] && cp "$stores_dir"/*.sqlite "$out/" 2>/dev/null  # the stores come back with $OUT
stores=()
for s in "$stores_dir"/*.sqlite ${TRITON_STORE:+"$TRITON_STORE"}; do [ -f "$s" ] && stores+=(--store "$s"); done
python3 -m mkbench analyze portability "${stores[@]}" --matrix --json "$out/summary.json" > "$out/portability.md" 2>&1
title="Portability matrix: every reference kernel against eager on one $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
python3 -m mkbench report "${stores[@]}" --title "$title" -o "$out/report.md" > /dev/null 2>&1
python3 -m mkbench report "${stores[@]}" --title "$title" --format html -o "$out/report.html" > /dev/null 2>&1
head -40 "$out/portability.md"
