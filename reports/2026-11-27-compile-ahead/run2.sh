#!/usr/bin/env bash
# Issue 28, second device call on ONE GPU: call 1 found the memory budget to be most of a unit's waits
# on one H200 (42% of unit seconds; 14.5 s per candidate), with the plan near the allocators' peaks
# (median 0.93) and the peaks not coinciding. Since b8ed5ba a unit that runs out of memory is run again
# with the budget to itself, so the share may plan on that. The README main job's first LIMIT s, this
# tree, three ways in a row from cold stores:
#   share075   --memory-share 0.75 (the default)
#   share100   --memory-share 1.0
#   share150   --memory-share 1.5
# and first the GPU test that a compile-only Triton launch opens no CUDA context (call 1 ran it under
# TRITON_INTERPRET=1 by mistake).
#   LIMIT=145 bash reports/2026-11-27-compile-ahead/run2.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
python3 -m pytest -q -p no:cacheprovider -rs tests/test_prewarm.py -k context > "$out/gpu-test.log" 2>&1
tail -3 "$out/gpu-test.log"
python3 benchmarks/throughput.py --previous .bench/prev --order "" --out /tmp/tp --limit "${LIMIT:-145}" \
  --variant "share075=--memory-share 0.75" --variant "share100=--memory-share 1.0" \
  --variant "share150=--memory-share 1.5" -- --hw auto --baselines eager --time-role large 2>&1 | tee "$out/throughput.log"
cp /tmp/tp/summary.json "$out/"
for label in share075 share100 share150; do
  { echo "## $label"; python3 -m mkbench analyze engine --store "/tmp/tp/$label.sqlite"; } >> "$out/engine.md" 2>&1
done
grep -h "^engine:" "$out/engine.md"
tar -czf "$out/throughput.tgz" --exclude='*-cache' -C /tmp tp
ls -la "$out"
