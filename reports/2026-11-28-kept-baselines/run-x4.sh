#!/usr/bin/env bash
# On nvidia-h200-x4 (counts in full): the adversarial GPU suite on this tree, then the README main job with
# --gpus all, this tree (eager baselines' workers kept between units, the judge's share set aside while a
# unit is timed) against the previous main (PREV, a `git archive` of it), one run after the other in the same
# call, each stopped at LIMIT s, the plan in the same order (../2026-11-28-kept-workers/run.sh).
#   git archive b2703ad core backends tasks hardware_profiles | (mkdir -p .bench/prev-b27 && tar -x -C .bench/prev-b27)
#   LIMIT=170 bash reports/2026-11-28-kept-baselines/run-x4.sh      # carry .bench/prev-b27
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/test_adversarial_gpu.py tests/test_poison_gpu.py \
  > "$out/gpu-tests.log" 2>&1
echo "exit $?" >> "$out/gpu-tests.log"
tail -n 3 "$out/gpu-tests.log"
rm -rf /tmp/x4run
OUT=/tmp/x4run GPUS="${GPUS:-all}" PREV="${PREV:-.bench/prev-b27}" LIMIT="${LIMIT:-170}" \
  bash "$(dirname "$0")/../2026-11-28-kept-workers/run.sh"
cp /tmp/x4run/device.txt /tmp/x4run/kept.log /tmp/x4run/summary.json /tmp/x4run/stores.tgz "$out/"
tar -czf "$out/engine.tgz" -C /tmp/x4run previous-engine.md this-engine.md compile-ahead.txt
for f in /tmp/x4run/previous-engine.md /tmp/x4run/this-engine.md; do sed -n 3p "$f"; done
