#!/usr/bin/env bash
# One H200 (kind nvidia-h200), 2026-11-29. Carry .bench/kbx and .bench/prev-552, made with
#   git archive 5525bf2 core backends tasks hardware_profiles | (mkdir -p .bench/prev-552 && tar -x -C .bench/prev-552)
# Worker starts and stops under the shared hold (this tree) against 5525bf2 (the timer's changes, starts outside the
# hold), the KernelBench-X corpus with --seed 11: previous, this, this again, each stopped at LIMIT s. Does the
# corpus time the same twice now (this against again), and what does the hold cost per kernel? Then the timer's and
# the adversarial GPU tests.
#   LIMIT=140 bash reports/2026-11-29-timing-stop/call56.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
python3 -c "import torch, triton, torch._inductor; torch.zeros(1, device='cuda')"
kbx=$PWD/.bench/kbx
python3 benchmarks/throughput.py --previous "$PWD/.bench/prev-552" --order previous,this --variant "again=" \
  --out /tmp/kbx --limit "${LIMIT:-140}" -- --hw auto --seed "${SEED:-11}" \
  --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" --method geak --baselines eager \
  --task "$(cat "$kbx/tasks.txt")" > "$out/kbx-throughput.log" 2>&1
cp /tmp/kbx/summary.json "$out/kbx-summary.json"
python3 -m mkbench analyze engine --store /tmp/kbx/this.sqlite > "$out/kbx-engine.md" 2>&1
for pair in "this again" "previous this" "previous again"; do
  set -- $pair
  echo "== $1 / $2"
  python3 -m mkbench.harness_bench repeatability "/tmp/kbx/$1.sqlite" "/tmp/kbx/$2.sqlite"
done > "$out/repeatability.txt" 2>&1
python3 reports/2026-11-29-timing-stop/compare.py /tmp/kbx/this.sqlite /tmp/kbx/again.sqlite > "$out/timing-compare.md" 2>&1
tar -czf "$out/kbx-stores.tgz" --exclude='*-cache' -C /tmp kbx
timeout 150 python3 -m pytest -q -p no:cacheprovider -rs tests/test_timing.py tests/test_adversarial_gpu.py \
  tests/test_poison_gpu.py > "$out/gpu-tests.log" 2>&1
echo "gpu tests exit $?" >> "$out/gpu-tests.log"
grep -h "^engine:" "$out/kbx-engine.md" | cut -c1-220
grep '"seconds_per_kernel\|"previous"\|"this"\|"again"' /tmp/kbx/summary.json | head -8
grep -h "^==\|time_median_abs\|speedup_median_abs" "$out/repeatability.txt"
head -6 "$out/timing-compare.md"
tail -n 3 "$out/gpu-tests.log"
