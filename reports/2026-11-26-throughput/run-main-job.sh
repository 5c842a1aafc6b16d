#!/usr/bin/env bash
# Second device call: the README main job on one GPU (this tree), stopped by `timeout` if it runs
# past MAIN_SECONDS (the store records it as interrupted; every finished unit is kept), then the
# GPU tests: allocator poisoning and the adversarial suite (cheats and honest controls, concurrent).
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$out/device.txt" 2>&1
nproc >> "$out/device.txt"
start=$SECONDS
timeout -k 15 "${MAIN_SECONDS:-300}" bash .ci/main > "$out/main-job.log" 2>&1
echo "main job: exit $?, $((SECONDS - start)) s" | tee -a "$out/main-job.log"
python3 -m mkbench analyze engine --store results/mkbench.sqlite > "$out/main-job-engine.md" 2>&1
cp results/mkbench.sqlite "$out/main-job.sqlite"
timeout -k 10 "${TEST_SECONDS:-240}" python3 -m pytest -v -p no:cacheprovider --basetemp=/tmp/pt \
  tests/test_poison_gpu.py tests/test_adversarial_gpu.py > "$out/gpu-tests.log" 2>&1
echo "gpu tests: exit $?" | tee -a "$out/gpu-tests.log"
tar -czf "$out/gpu-tests-stores.tgz" --exclude='*-cache' -C /tmp pt 2>/dev/null
tail -5 "$out/main-job.log"; tail -15 "$out/gpu-tests.log"
