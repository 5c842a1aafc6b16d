#!/usr/bin/env bash
# Call 33 (not run yet: written in the eighth session; one H200; carry .bench/x4/tasks .bench/x4/sol/cudnn
# .bench/x4/sol/default .bench/cl1-start, where call31.sqlite is a copy of ../2026-11-28-cuda-l1/call31-h200/cudal1.sqlite):
# issue 30 on the H200.
# 1. the h100 set's cudnn variant (250 kernels, never run on an H200) into call 31's store, seeded order, traced on
#    the first call as the H100 run of it was (call 7);
# 2. in what is left: the 40 tasks of ../2026-11-28-cuda-l1/compile40.txt, the default variant, against eager and
#    torch.compile, into a store of its own (a resumed run with other baselines would be a new run of call 26's store,
#    its candidates judged twice): analysed apart, e.g. `mkbench analyze cuda-l1 --store compile/cudal1.sqlite`.
#   bash reports/2026-11-28-calls/call33.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
mkdir -p "$out/cudnn" "$out/compile"
OUT="$out/cudnn" STORE=.bench/cl1-start/call31.sqlite ADOPT=1 SHUFFLE=7 DEADLINE=$(( ${CUDNN_END_S:-420} - SECONDS )) \
  EXTRA="--trace-call first" RUNS="sol/cudnn:cuda-l1-h100-cudnn" bash .bench/cl1-start/run_x4b.sh
tar -czf "$out/cudnn.tgz" -C "$out" cudnn && rm -rf "$out/cudnn"
OUT="$out/compile" DEADLINE=$(( ${END_S:-570} - SECONDS )) \
  TASKS=$(paste -sd, reports/2026-11-28-cuda-l1/compile40.txt) BASELINES=eager,torch_compile \
  EXTRA="--trace-call first" RUNS="sol/default:cuda-l1-h100" bash .bench/cl1-start/run_x4b.sh
tar -czf "$out/compile.tgz" -C "$out" compile && rm -rf "$out/compile"
