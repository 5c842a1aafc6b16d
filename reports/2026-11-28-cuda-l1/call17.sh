#!/usr/bin/env bash
# Call 17 (2026-11-28, fourth session), one GPU: first the hypot probe (why the CUDA/HIP hypot references
# were `incorrect` in ../2026-11-27-portability), then the rest of CUDA-L1's a100, h20, l40 and 3090 sets,
# default variant, tasks in a seeded random order, into call 15's store, each set run to its end in turn
# (no SPLIT) until the deadline. Carry .bench/x4/tasks .bench/x4/sol-a100 .bench/x4/sol-h20
# .bench/x4/sol-l40 .bench/x4/sol-3090 (imports: run_x4b.sh's head).
#   bash reports/2026-11-28-cuda-l1/call17.sh
out=${OUT:-results}; mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
timeout 60 python3 reports/2026-11-28-calls/hypot_probe.py > "$out/hypot-probe.log" 2>&1; echo "hypot probe: exit $?"
tail -4 "$out/hypot-probe.log"
SHUFFLE=7 ADOPT=1 STORE=reports/2026-11-28-cuda-l1/call15-h100/cudal1.sqlite \
  RUNS="${RUNS:-sol-a100:cuda-l1-a100 sol-h20:cuda-l1-h20 sol-l40:cuda-l1-l40 sol-3090:cuda-l1-3090}" \
  DEADLINE=${DEADLINE:-500} bash reports/2026-11-28-cuda-l1/run_x4b.sh
