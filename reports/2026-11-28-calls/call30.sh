#!/usr/bin/env bash
# Call 30 (one H200, eighth session; carry .bench/kbx .bench/prev-main-kbx = `git archive 5429e76 core backends tasks
# hardware_profiles`): issue 28, the correctness trace on a warm call (--trace-call, auto = warm on a GPU).
# 1. the GPU tests of the adversarial suite and of hidden work (the same verdicts and evidence with the new default);
# 2. the KernelBench-X corpus against the previous main in the same call, LIMIT s each (kbx-corpus.sh).
#   LIMIT=180 bash reports/2026-11-28-calls/call30.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_adversarial_gpu.py \
  --basetemp=/tmp/gpu-tests > "$out/gpu-tests.log" 2>&1
echo "exit $?" >> "$out/gpu-tests.log"
tail -n 3 "$out/gpu-tests.log"
OUT="$out" PREV=.bench/prev-main-kbx LIMIT="${LIMIT:-200}" bash reports/2026-11-28-calls/kbx-corpus.sh
tar -czf "$out/gpu-tests.tgz" -C /tmp gpu-tests 2>/dev/null
