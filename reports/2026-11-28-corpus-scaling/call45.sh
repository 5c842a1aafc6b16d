#!/usr/bin/env bash
# One H200 (kind nvidia-h200), twelfth session of 2026-11-28: issue 28's corpus target on this tree, side by side
# with the previous main (b2703ad, before the kept eager workers and the judge's share set aside), then the
# bfloat16 probe on the two contracts fixed in 2c4e63f. Carry .bench/kbx and .bench/prev-b27:
#   git archive b2703ad core backends tasks hardware_profiles | (mkdir -p .bench/prev-b27 && tar -x -C .bench/prev-b27)
#   LIMIT=170 PROBE_S=60 bash reports/2026-11-28-corpus-scaling/call45.sh
set -uo pipefail
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
PREV=.bench/prev-b27 LIMIT=${LIMIT:-170} OUT="$out" bash reports/2026-11-28-calls/kbx-corpus.sh
python3 reports/2026-11-28-bf16-edge/probe.py "${PROBE_S:-60}" > "$out/probe.log" 2>&1
tail -n 8 "$out/probe.log"
