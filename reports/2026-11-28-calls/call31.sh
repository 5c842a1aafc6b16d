#!/usr/bin/env bash
# Call 31 (2x H200, eighth session; carry .bench/x4/tasks .bench/x4/sol/cuda_graph .bench/x4/sol/cudnn
# .bench/cl1-start, where call28.sqlite is a copy of ../2026-11-28-cuda-l1/call28-h200/cudal1.sqlite): issue 30 on the
# H200, the h100 set's cuda_graph variant to its end (call 28 ran a seeded sample of 114 of 249) and then its cudnn
# variant (never run on an H200), on both GPUs (--gpus all), resuming call 28's store in the same seeded order.
#   DEADLINE=540 bash reports/2026-11-28-calls/call31.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
OUT="$out" STORE=.bench/cl1-start/call28.sqlite ADOPT=1 SHUFFLE=7 DEADLINE=${DEADLINE:-540} \
  RUNS="sol/cuda_graph:cuda-l1-h100-cuda_graph sol/cudnn:cuda-l1-h100-cudnn" bash .bench/cl1-start/run_x4b.sh
