#!/usr/bin/env bash
# Call 31 (one H200, eighth session; carry .bench/kbx .bench/prev-main-kbx = `git archive 8342a26 core backends
# tasks hardware_profiles`, .bench/x4/tasks .bench/x4/sol/cuda_graph .bench/cl1-start, where call28.sqlite is a copy of
# ../2026-11-28-cuda-l1/call28-h200/cudal1.sqlite):
# 1. issue 28: timing phases that defer for long checks (--timing-defer, default 30 s) against 8342a26 (call 30's
#    tree, which drains at once), the KernelBench-X corpus, LIMIT s each (kbx-corpus.sh);
# 2. issue 30: the rest of the h100 set's cuda_graph variant on the H200 (call 28 ran a seeded sample of 114 of 249),
#    resuming call 28's store in the same seeded order, in what is left of the call; --trace-call first, as call 28
#    traced them.
#   LIMIT=150 bash reports/2026-11-28-calls/call31.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
OUT="$out" PREV=.bench/prev-main-kbx LIMIT="${LIMIT:-150}" bash reports/2026-11-28-calls/kbx-corpus.sh
mkdir -p "$out/cl1"
OUT="$out/cl1" STORE=.bench/cl1-start/call28.sqlite ADOPT=1 SHUFFLE=7 DEADLINE=$(( ${END_S:-575} - SECONDS )) \
  EXTRA="--trace-call first" RUNS="sol/cuda_graph:cuda-l1-h100-cuda_graph" bash .bench/cl1-start/run_x4b.sh
tar -czf "$out/cl1.tgz" -C "$out" cl1 && rm -rf "$out/cl1"
