#!/usr/bin/env bash
# Device call 1 (run from the repository root on the lent GPU machine). Needs, carried in .bench/:
#   .bench/prev  the previous main's sources: git archive 2259e45 core backends tasks hardware_profiles
#   .bench/kbx   KernelBench-X's task files and GEAK-corpus predictions, imported by mkbench (see README)
# Everything lands in $OUT.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$out/device.txt" 2>&1
nproc >> "$out/device.txt"
git log -1 --format='%H %s' >> "$out/device.txt" 2>/dev/null || true
kbx=$PWD/.bench/kbx
# 1. 66 Triton candidates that are not mkbench's own (KernelBench-X GEAK corpus, last round of each
#    task) against eager: this tree, then the previous main, same device call
python3 benchmarks/throughput.py --previous .bench/prev --out /tmp/kbx --order "${ORDER:-this,previous}" \
  --limit "${LIMIT:-230}" -- --hw auto --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" --method geak \
  --baselines eager --task "$(cat "$kbx/tasks.txt")" 2>&1 | tee "$out/kbx-throughput.log"
cp /tmp/kbx/summary.json "$out/kbx-summary.json"
tar -czf "$out/kbx-stores.tgz" --exclude='*-cache' -C /tmp kbx
# 2. the GPU tests: the adversarial suite (honest controls run concurrently) and the allocator poisoning
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_adversarial_gpu.py tests/test_poison_gpu.py \
  --basetemp=/tmp/gputests 2>&1 | tee "$out/gpu-tests.log"
tar -czf "$out/gpu-tests.tgz" --exclude='*-cache' -C /tmp gputests 2>/dev/null || true
