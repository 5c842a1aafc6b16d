#!/usr/bin/env bash
# Call 28 (one H200; carry .bench/x4/tasks .bench/x4/sol/cuda_graph .bench/cl1-start): issue 30, the h100 set's
# cuda_graph variant on the H200, a seeded sample (--shuffle-tasks 7) of as many of its 249 kernels as the call's
# remaining device time allows, into a new store (the H100 ran all of them in call 7).
#   DEADLINE=240 bash reports/2026-11-28-calls/call28.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
OUT="$out" RUNS=sol/cuda_graph:cuda-l1-h100-cuda_graph SHUFFLE=7 DEADLINE=${DEADLINE:-240} \
  bash .bench/cl1-start/run_x4b.sh
