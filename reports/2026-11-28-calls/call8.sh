#!/usr/bin/env bash
# One GPU, one call (issues 28 and 30):
#  1. the six cudnn-variant CUDA-L1 kernels called `hack` in call 7 (4x H100), again with the trace cut
#     in launch order at 20000 events (686ef57); their unit logs give "N on the device (K kept)"
#  2. GPU tests: warm libraries and the adversarial suite, after the trace change
#  3. the memory plan's factors 6/3 (881f7b7) against 8/4 (.bench/prev = git archive 40666d6),
#     the README main job's first LIMIT s each
# Here, first: git archive 40666d6 core backends tasks hardware_profiles | tar -x -C .bench/prev
# Device call (carry .bench/prev and .bench/x4): LIMIT=100 bash reports/2026-11-28-calls/call8.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
OUT=/tmp/probe RUNS=sol/cudnn:cuda-l1-h100-cudnn-probe TASKS=kb_l2_6,kb_l2_24,kb_l2_43,kb_l2_79,kb_l2_83,kb_l3_16 \
  DEADLINE=130 bash reports/2026-11-28-cuda-l1/run_x4b.sh
python3 -m mkbench analyze engine --store /tmp/probe/cudal1.sqlite > /tmp/probe/engine.md 2>&1
tar -czf "$out/probe.tgz" -C /tmp probe
python3 -m pytest -q -p no:cacheprovider -rs tests/test_warm_libraries.py tests/test_adversarial_gpu.py > "$out/gpu-tests.log" 2>&1
tail -3 "$out/gpu-tests.log"
LIMIT=${LIMIT:-100} bash reports/2026-11-27-compile-ahead/run4.sh
