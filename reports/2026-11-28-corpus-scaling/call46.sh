#!/usr/bin/env bash
# 4x H200 (kind nvidia-h200-x4, counts in full), twelfth session of 2026-11-28: issue 28's scaling figure on one
# tree. The README main job (Triton references against eager, large shapes timed), three runs one after the other,
# each stopped at LIMIT s and taking the plan in the same order: GPU 0 alone (this tree's default), every GPU
# (--gpus all; 4 lanes per GPU, so a timing phase gathers 1 unit by default), and every GPU with --timing-batch 2.
# NVIDIA's GPU performance monitoring (GPM) samples every GPU's SM activity and occupancy meanwhile (gpm.log, one
# line per GPU per second, time-stamped): whether a GPU "busy" by nvidia-smi's utilization had its SMs busy.
#   LIMIT=140 bash reports/2026-11-28-corpus-scaling/call46.sh
set -uo pipefail
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
# 1 graphics activity, 2 SM activity, 3 SM occupancy (percent of the period); -o T: a time stamp per line
nvidia-smi dmon --gpm-metrics 1,2,3 -d 1 -o T > "$out/gpm.log" 2>&1 &
gpm=$!
date -u +"start %T" >> "$out/gpm.log"
RUN_GPUS=all VARIANTS="all=--gpus all;batch2=--gpus all --timing-batch 2" LIMIT=${LIMIT:-150} OUT="$out" \
  bash reports/2026-11-28-calls/scaling-x2.sh
kill "$gpm" 2>/dev/null
grep -h "^engine:\|run [0-9]" /tmp/scaling/*-engine.md | head -20
