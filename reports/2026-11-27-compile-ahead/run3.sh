#!/usr/bin/env bash
# Next device call on ONE GPU (not run yet): this session's changes that no GPU has run.
#  1. GPU tests: library handles before a capture (tests/test_warm_libraries.py) and the adversarial
#     suite (tests/test_adversarial_gpu.py: the hidden-work rule's slack must still catch its side-stream cheat)
#  2. the README main job's first LIMIT s: the previous main (.bench/prev: git archive 7b28c01 ...,
#     before the judge read fewer values back and compared outputs in slices) against this tree, one
#     after the other; `analyze engine` sets each unit's judge and worker allocator peaks against its plan
#   git archive 7b28c01 core backends tasks hardware_profiles | tar -x -C .bench/prev   # here, first
#   LIMIT=145 bash reports/2026-11-27-compile-ahead/run3.sh                            # carry .bench/prev
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
python3 -m pytest -q -p no:cacheprovider -rs tests/test_warm_libraries.py tests/test_adversarial_gpu.py > "$out/gpu-tests.log" 2>&1
tail -3 "$out/gpu-tests.log"
python3 benchmarks/throughput.py --previous .bench/prev --out /tmp/tp --limit "${LIMIT:-145}" \
  -- --hw auto --baselines eager --time-role large 2>&1 | tee "$out/throughput.log"
cp /tmp/tp/summary.json "$out/"
for label in previous this; do
  { echo "## $label"; python3 -m mkbench analyze engine --store "/tmp/tp/$label.sqlite"; } >> "$out/engine.md" 2>&1
done
grep -h "^engine:\|^| judge" "$out/engine.md"
tar -czf "$out/throughput.tgz" --exclude='*-cache' -C /tmp tp
