#!/usr/bin/env bash
# One H200 (kind nvidia-h200), 2026-11-29. Carry .bench/kbx. Why does a KernelBench-X harness call take 1.5 ms
# in one worker and 45 ms in another (calls 38 and 54)? The corpus twice by this tree (every timing now records
# its thread's CPU share and context switches over its samples), --seed 11 both times, each stopped at LIMIT s;
# the two compared row for row; then the timer's GPU tests.
#   LIMIT=150 bash reports/2026-11-29-timing-stop/call55.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
python3 -c "import torch, triton, torch._inductor; torch.zeros(1, device='cuda')"
kbx=$PWD/.bench/kbx
python3 benchmarks/throughput.py --previous . --order this --variant "again=" \
  --out /tmp/kbx --limit "${LIMIT:-150}" -- --hw auto --seed "${SEED:-11}" \
  --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" --method geak --baselines eager \
  --task "$(cat "$kbx/tasks.txt")" > "$out/kbx-throughput.log" 2>&1
cp /tmp/kbx/summary.json "$out/kbx-summary.json"
python3 -m mkbench analyze engine --store /tmp/kbx/this.sqlite > "$out/kbx-engine.md" 2>&1
python3 -m mkbench.harness_bench repeatability /tmp/kbx/this.sqlite /tmp/kbx/again.sqlite > "$out/repeatability.txt" 2>&1
python3 reports/2026-11-29-timing-stop/compare.py /tmp/kbx/this.sqlite /tmp/kbx/again.sqlite > "$out/timing-compare.md" 2>&1
tar -czf "$out/kbx-stores.tgz" --exclude='*-cache' -C /tmp kbx
timeout 120 python3 -m pytest -q -p no:cacheprovider -rs tests/test_timing.py > "$out/gpu-tests.log" 2>&1
echo "gpu tests exit $?" >> "$out/gpu-tests.log"
grep -h "^engine:" "$out/kbx-engine.md" | cut -c1-220
cat "$out/repeatability.txt"
head -30 "$out/timing-compare.md" | cut -c1-400
tail -n 3 "$out/gpu-tests.log"
