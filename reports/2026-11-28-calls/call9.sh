#!/usr/bin/env bash
# A multi-GPU call (issue 30; on 2 GPUs where no 4-GPU kind is lent), every GPU of the host (--gpus all), two stores:
#  1. CUDA-L1's own judgement (--contract cuda-l1: allclose 1e-2, models in eval mode) on the h100 set's
#     default variant, its own tasks and eager baselines: $OUT/cl1/cudal1.sqlite
#  2. the rest of the a100 set, then the h20 set, into call 7's store: $OUT/sets/cudal1.sqlite
# Here, first (a minute each on 2 cores; the a100 and h20 folders as in run_x4b.sh's header):
#   mkbench import kernelbench .bench/cudal1/h100.json --out .bench/x4/tasks-cl1 --solutions-out \
#     .bench/x4/sol-cl1 --gpu-set h100 --variant default --contract cuda-l1
# Device call (carry .bench/x4): bash reports/2026-11-28-calls/call9.sh
set -uo pipefail
began=$(date +%s)
out=${OUT:-results}
mkdir -p "$out" /tmp/unit-logs
left() { echo $(( ${1} - ($(date +%s) - began) )); }
OUT=$out/cl1 TASKS_DIR=tasks-cl1 RUNS=sol-cl1:cuda-l1-h100 DEADLINE=${CL1_S:-300} \
  bash reports/2026-11-28-cuda-l1/run_x4b.sh
OUT=$out/sets ADOPT=1 STORE=reports/2026-11-28-cuda-l1/call7-x4-h100/cudal1.sqlite \
  RUNS="sol-a100:cuda-l1-a100 sol-h20:cuda-l1-h20" DEADLINE=$(left ${DEADLINE:-560}) \
  bash reports/2026-11-28-cuda-l1/run_x4b.sh
# eight files come back: one device.txt, the two stores and run logs, the unit logs as one archive
mv "$out/cl1/device.txt" "$out/device.txt"; rm -f "$out/sets/device.txt"
for s in cl1 sets; do [ -f "$out/$s/unit-logs.tgz" ] && mv "$out/$s/unit-logs.tgz" "/tmp/unit-logs/$s.tgz"; done
tar -cf "$out/unit-logs.tar" -C /tmp unit-logs
ls -la "$out" "$out"/*
