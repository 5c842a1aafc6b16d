#!/usr/bin/env bash
# One H200 (kind nvidia-h200), thirteenth session of 2026-11-28. Carry .bench/kbx and .bench/prev-09e, made with
#   git archive 09eae46 core backends tasks hardware_profiles | (mkdir -p .bench/prev-09e && tar -x -C .bench/prev-09e)
# 1. The KernelBench-X corpus (64 GEAK candidates and their eager baselines), the previous main 09eae46 then this
#    tree (c1f624c: the probe's worker spawned before the orchestrator's imports), each stopped at LIMIT s if it
#    has not ended (both ended by themselves in call 47, in about 146 s).
# 2. lion's Triton reference, 10 correctness seeds per shape and dtype from one run seed (call 48's), by both trees:
#    the contract before and after b7e8034 (the coefficients' float32 rounding).
# 3. The adversarial GPU suite on this tree.
#   LIMIT=200 bash reports/2026-11-28-corpus-scaling/call50.sh
set -uo pipefail
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
PREV=.bench/prev-09e ORDER=previous,this LIMIT=${LIMIT:-200} OUT="$out" bash reports/2026-11-28-calls/kbx-corpus.sh
python3 benchmarks/throughput.py --previous .bench/prev-09e --out /tmp/lion --limit 120 -- --hw auto --task lion \
  --baselines none --no-timing --seeds 10 --seed 1886021933 > "$out/lion.log" 2>&1
for t in previous this; do
  echo "== $t"; python3 -c "
import json
for r in json.load(open('/tmp/lion/$t.json'))['results']:
    print(r['method'], r['shape'], r['dtype'], r['verdict'], r['correct_status'], (r['error'] or '')[:240])
"
done >> "$out/lion.log" 2>&1
cp /tmp/lion/previous.sqlite "$out/lion-previous.sqlite"; cp /tmp/lion/this.sqlite "$out/lion-this.sqlite"
timeout 240 python3 -m pytest -q -p no:cacheprovider -rs tests/test_adversarial_gpu.py tests/test_poison_gpu.py \
  > "$out/adversarial-gpu.log" 2>&1
echo "adversarial exit $?" >> "$out/adversarial-gpu.log"
tail -n 12 "$out/kbx-throughput.log"; tail -n 14 "$out/lion.log"; tail -n 5 "$out/adversarial-gpu.log"
