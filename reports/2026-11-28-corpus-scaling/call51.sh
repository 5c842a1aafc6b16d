#!/usr/bin/env bash
# One H200 (kind nvidia-h200), thirteenth session of 2026-11-28. Carry .bench/kbx and .bench/prev-067, made with
#   git archive 0672f50 core backends tasks hardware_profiles | (mkdir -p .bench/prev-067 && tar -x -C .bench/prev-067)
# The KernelBench-X corpus (64 GEAK candidates and their eager baselines) by 0672f50 (the probe's worker spawned
# ahead) then by this tree (f892369: the fork server started ahead too), each stopped at LIMIT s if it has not
# ended, the same plan in the same order; then the adversarial GPU suite on this tree.
#   LIMIT=185 bash reports/2026-11-28-corpus-scaling/call51.sh
set -uo pipefail
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
PREV=.bench/prev-067 ORDER=previous,this LIMIT=${LIMIT:-185} OUT="$out" bash reports/2026-11-28-calls/kbx-corpus.sh
python3 -m mkbench analyze engine --store /tmp/kbx/previous.sqlite > "$out/kbx-previous-engine.md" 2>&1
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/test_adversarial_gpu.py tests/test_poison_gpu.py \
  > "$out/adversarial-gpu.log" 2>&1
echo "adversarial exit $?" >> "$out/adversarial-gpu.log"
grep -h "^engine:\| 1 |" "$out/kbx-engine.md" "$out/kbx-previous-engine.md" | cut -c1-200
tail -n 4 "$out/adversarial-gpu.log"
