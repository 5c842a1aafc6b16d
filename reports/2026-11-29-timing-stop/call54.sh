#!/usr/bin/env bash
# One H200 (kind nvidia-h200), 2026-11-29. Carry .bench/kbx and .bench/prev-6c3 (see call53.sh).
# The KernelBench-X corpus, every run with the same --seed: this tree first, then the previous main 6c399d6, then
# this tree again (each stopped at LIMIT s, the same plan in the same order). Seconds per kernel with this tree
# running first; does it time the same twice (harness_bench repeatability, this against again; reports/2026-11-28-
# calls/repeat-kbx.sh asked the same of the old timer, call 36: 12% of rows within 3%)? Then the timer's GPU tests
# and the adversarial GPU suite.
#   LIMIT=160 bash reports/2026-11-29-timing-stop/call54.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
python3 -c "import torch, triton, torch._inductor; torch.zeros(1, device='cuda')"
kbx=$PWD/.bench/kbx
python3 benchmarks/throughput.py --previous "$PWD/.bench/prev-6c3" --order this,previous --variant "again=" \
  --out /tmp/kbx --limit "${LIMIT:-160}" -- --hw auto --seed "${SEED:-11}" \
  --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" --method geak --baselines eager \
  --task "$(cat "$kbx/tasks.txt")" > "$out/kbx-throughput.log" 2>&1
cp /tmp/kbx/summary.json "$out/kbx-summary.json"
python3 -m mkbench analyze engine --store /tmp/kbx/this.sqlite > "$out/kbx-engine.md" 2>&1
for pair in "this again" "this previous" "again previous"; do
  set -- $pair
  echo "== $1 / $2"
  python3 -m mkbench.harness_bench repeatability "/tmp/kbx/$1.sqlite" "/tmp/kbx/$2.sqlite"
done > "$out/repeatability.txt" 2>&1
python3 reports/2026-11-29-timing-stop/compare.py /tmp/kbx/this.sqlite /tmp/kbx/again.sqlite > "$out/timing-compare.md" 2>&1
tar -czf "$out/kbx-stores.tgz" --exclude='*-cache' -C /tmp kbx
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/test_timing.py tests/test_adversarial_gpu.py \
  tests/test_poison_gpu.py > "$out/gpu-tests.log" 2>&1
echo "gpu tests exit $?" >> "$out/gpu-tests.log"
grep -h "^engine:" "$out/kbx-engine.md" | cut -c1-220
grep -v '"--task"\|kbx_' /tmp/kbx/summary.json | head -30
cat "$out/repeatability.txt"
head -6 "$out/timing-compare.md"
tail -n 4 "$out/gpu-tests.log"
