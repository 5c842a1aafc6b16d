#!/usr/bin/env bash
# Issue 28, one device call on ONE GPU: the README main job's first LIMIT s (default 145, setup apart),
# three ways in a row on the same warm machine, each from a cold store and Triton cache:
#   previous  the previous main (95f1633), laid out from .bench/prev (git archive 95f1633 core backends
#             tasks hardware_profiles | tar -x -C .bench/prev)
#   this      this tree: the compile-ahead worker opens no CUDA context; its seconds split by part
#   cw12      this tree with --compile-workers 12 (the pool fixed at 12 throwaway workers, not 4-8)
# and first the GPU test that a compile-only Triton launch opens no CUDA context.
#   LIMIT=145 bash reports/2026-11-27-compile-ahead/run.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
python3 -m pytest -q -p no:cacheprovider -rs tests/test_prewarm.py -k context > "$out/gpu-test.log" 2>&1
tail -3 "$out/gpu-test.log"
python3 benchmarks/throughput.py --previous .bench/prev --out /tmp/tp --limit "${LIMIT:-145}" \
  --variant "cw12=--compile-workers 12" -- --hw auto --baselines eager --time-role large 2>&1 | tee "$out/throughput.log"
cp /tmp/tp/summary.json "$out/"
for label in previous this cw12; do
  { echo "## $label"; python3 -m mkbench analyze engine --store "/tmp/tp/$label.sqlite"; } >> "$out/engine.md" 2>&1
done
grep -h "^engine:" "$out/engine.md"
tar -czf "$out/throughput.tgz" --exclude='*-cache' -C /tmp tp
ls -la "$out"
