#!/usr/bin/env bash
# One H200 (kind nvidia-h200), thirteenth session of 2026-11-28: call 51's A/B in the other order (this tree
# first, then 0672f50), to tell the fork server ahead from whatever favours a call's second run. Carry .bench/kbx
# and .bench/prev-067 (see call51.sh).
#   LIMIT=170 bash reports/2026-11-28-corpus-scaling/call52.sh
set -uo pipefail
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
PREV=.bench/prev-067 ORDER=this,previous LIMIT=${LIMIT:-170} OUT="$out" bash reports/2026-11-28-calls/kbx-corpus.sh
python3 -m mkbench analyze engine --store /tmp/kbx/previous.sqlite > "$out/kbx-previous-engine.md" 2>&1
grep -h "^engine:\| 1 |" "$out/kbx-engine.md" "$out/kbx-previous-engine.md" | cut -c1-200
