#!/usr/bin/env bash
# 4x H200 (kind nvidia-h200-x4, counts in full), twelfth session of 2026-11-28: issue 28's scaling figure on one
# tree. The README main job (Triton references against eager, large shapes timed), two runs one after the other,
# each stopped at LIMIT s if it has not ended, taking the plan in the same order: GPU 0 alone (this tree's
# default), then every GPU (--gpus all), which should end by itself: its wall time is main_job_seconds_4gpu.
# VARIANTS (scaling-x2.sh) replaces the second run, e.g. VARIANTS="batch2=--gpus all --timing-batch 2" ORDER=.
# NVIDIA's GPU performance monitoring (GPM) samples every GPU's SM activity and occupancy meanwhile (gpm.log, one
# line per GPU per second, time-stamped): whether a GPU "busy" by nvidia-smi's utilization had its SMs busy.
#   LIMIT=230 bash reports/2026-11-28-corpus-scaling/call46.sh
set -uo pipefail
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
# 1 graphics activity, 2 SM activity, 3 SM occupancy (percent of the period); -o T: a time stamp per line
date -u +"start %T" > "$out/gpm.log"
nvidia-smi dmon --gpm-metrics 1,2,3 -d 1 -o T >> "$out/gpm.log" 2>&1 &
gpm=$!
VARIANTS=${VARIANTS:-all=--gpus all} LIMIT=${LIMIT:-230} OUT="$out" \
  bash reports/2026-11-28-calls/scaling-x2.sh
kill "$gpm" 2>/dev/null
grep -h "^engine:\|run [0-9]" /tmp/scaling/*-engine.md | head -20
