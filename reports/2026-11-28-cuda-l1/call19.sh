#!/usr/bin/env bash
# Call 19 (2026-11-28, fourth session), one H100: the rest of CUDA-L1's h20 set (shuffled, seed 7) into call 17's
# store, with compile ahead for load_inline candidates (a1fe51d: the build made in a throwaway worker outside
# the lanes; its first GPU run). Carry .bench/x4/tasks .bench/x4/sol-h20.
#   bash reports/2026-11-28-cuda-l1/call19.sh
SHUFFLE=7 ADOPT=1 STORE=reports/2026-11-28-cuda-l1/call17-h100/cudal1.sqlite RUNS="sol-h20:cuda-l1-h20" \
  STOP_S=${STOP_S:-40} DEADLINE=${DEADLINE:-240} bash reports/2026-11-28-cuda-l1/run_x4b.sh
