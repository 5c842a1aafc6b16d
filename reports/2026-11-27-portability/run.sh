#!/usr/bin/env bash
# The five-backend portability matrix (issue 30, part 2), not yet run: every reference kernel of
# each backend on one GPU, the large shapes timed against eager, then the matrix
# (`mkbench analyze portability`, summary.json) and the report.
#
# Device call (carry .whl: pyopencl for sycl, see ../shared/device/README.md):
#   bash reports/2026-11-27-portability/run.sh
# CUDA, HIP, Pallas and SYCL run here, each under its own `timeout` (LIMIT seconds, default 130:
# four of them fit one 600 s device command). Every reference of a backend may take longer than
# that: then run one backend per call (BACKENDS=cuda LIMIT=540 ...), with STORES a folder in the
# working tree holding the earlier calls' stores (e.g. reports/2026-11-27-portability/stores, which
# travels with the tree): each run is --resume'd there, so a backend cut off by its timeout goes on
# where it stopped, and the analysis reads every store in it. Triton's references are the README
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
for B in ${BACKENDS:-cuda hip pallas sycl}; do
  start=$(date +%s)
  timeout -s TERM "${LIMIT:-130}" python3 -m mkbench run --backend "$B" --hw auto --baselines eager \
    --time-role large --gpus all --store "$stores_dir/$B.sqlite" --resume --no-progress > "$out/$B.log" 2>&1
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
