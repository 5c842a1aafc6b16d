#!/usr/bin/env bash
# One H200 (kind nvidia-h200), 2026-11-29. Carry .bench/kbx and .bench/prev-6c3, made with
#   git archive 6c399d6 core backends tasks hardware_profiles | (mkdir -p .bench/prev-6c3 && tar -x -C .bench/prev-6c3)
# torch, Triton and inductor imported once first (the page cache warm for both trees), then the KernelBench-X
# corpus (64 GEAK candidates and their eager baselines) by the previous main 6c399d6, then by this tree (the
# timer's stopping rule and run-ahead fix), each stopped at LIMIT s, the same plan in the same order; the
# timings of the two stores compared row for row; then the timer's GPU tests and the adversarial GPU suite.
#   ORDER=previous,this LIMIT=170 bash reports/2026-11-29-timing-stop/call53.sh
set -uo pipefail
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -c "import torch, triton, torch._inductor; torch.zeros(1, device='cuda')"
PREV=.bench/prev-6c3 ORDER=${ORDER:-previous,this} LIMIT=${LIMIT:-170} OUT="$out" bash reports/2026-11-28-calls/kbx-corpus.sh
python3 -m mkbench analyze engine --store /tmp/kbx/previous.sqlite > "$out/kbx-previous-engine.md" 2>&1
python3 reports/2026-11-29-timing-stop/compare.py /tmp/kbx/previous.sqlite /tmp/kbx/this.sqlite > "$out/timing-compare.md" 2>&1
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/test_timing.py tests/test_adversarial_gpu.py \
  tests/test_poison_gpu.py > "$out/gpu-tests.log" 2>&1
echo "gpu tests exit $?" >> "$out/gpu-tests.log"
grep -h "^engine:" "$out/kbx-engine.md" "$out/kbx-previous-engine.md" | cut -c1-220
cat "$out/timing-compare.md" | head -30
tail -n 4 "$out/gpu-tests.log"
