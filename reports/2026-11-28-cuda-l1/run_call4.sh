#!/usr/bin/env bash
# Device call 4 (one GPU, whichever card comes): on an H200, the h100 set's default variant for the 100
# tasks call 2's H200 store lacks (h200-rest.txt), into a store of its own; on an H100, the h100 set's
# cuda_graph variant from the start. First the GPU test that a compile-only Triton launch opens no
# CUDA context (issue 28). Carry .bench/cudal1/h100.json.
#   DEADLINE=400 bash reports/2026-11-28-cuda-l1/run_call4.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
python3 -m pytest -q -p no:cacheprovider -rs tests/test_prewarm.py -k context > "$out/gpu-test.log" 2>&1
tail -2 "$out/gpu-test.log"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$name" in
  *H200*) export VARIANT=default TASKS_FILE=reports/2026-11-28-cuda-l1/h200-rest.txt ;;
  *) export VARIANT=cuda_graph ;;
esac
echo "$name: variant $VARIANT ${TASKS_FILE:-all tasks}"
SET=h100 NO_REPORT=1 DEADLINE=${DEADLINE:-400} bash reports/2026-11-28-cuda-l1/run.sh
