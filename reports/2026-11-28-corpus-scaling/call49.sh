#!/usr/bin/env bash
# Call 49 (thirteenth session of 2026-11-28; written in the twelfth): --timing-batch 2 against the
# default on 4 GPUs side by side, which call 48 could only compare with another call's run. The whole README main
# job with --gpus all twice, one after the other, each stopped at LIMIT s if it has not ended (call 48's batch-2 run
# ended by itself in 222 s), the plan in the same order; GPM samples as in call46.sh. Then the rows both runs timed,
# compared across the GPUs that ran them (benchmarks/gpu_consistency.py --from-stores), and the lion probe on GPU 0.
#   LIMIT=255 bash reports/2026-11-28-corpus-scaling/call49.sh     # kind nvidia-h200-x4 (counts in full)
set -uo pipefail
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
ORDER= VARIANTS="default=--gpus all;batch2=--gpus all --timing-batch 2" LIMIT=${LIMIT:-260} OUT="$out" \
  bash reports/2026-11-28-corpus-scaling/call46.sh
# the same rows on other GPUs in the two runs: the cross-GPU spread (rows say their GPU since e1c5cb2)
python3 benchmarks/gpu_consistency.py --out /tmp/cons --from-stores /tmp/scaling/default.sqlite \
  /tmp/scaling/batch2.sqlite > "$out/cross-gpu.md" 2>&1
python3 reports/2026-11-28-corpus-scaling/lion_probe.py 1886021933 1 20 > "$out/lion-probe.log" 2>&1
tail -n 20 "$out/lion-probe.log"
