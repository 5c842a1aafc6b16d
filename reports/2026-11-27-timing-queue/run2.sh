#!/usr/bin/env bash
# Device call 2: (1) which confinement lets a CUDA worker start (reports/2026-11-27-confinement);
# (2) the GPU tests on the merged tree: adversarial suite (honest controls concurrently), allocator
# poisoning, isolation (the 3 that failed in call 7 of reports/2026-11-27-engine), unit limit.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; git log -1 --format=%H;
  uname -r; which strace; } > "$out/device2.txt" 2>&1
mkdir -p "$out/probe"
OUT="$out/probe" timeout 200 python3 reports/2026-11-27-confinement/cuda_probe.py all none landlock-old landlock-new \
  seccomp-default seccomp-no-socket-rule seccomp-socket-EACCES seccomp-no-connect all-default all-new \
  > "$out/cuda-probe-stdout.txt" 2>&1
rm -rf "$out/probe/scratch"
timeout 330 python3 -m pytest -q -p no:cacheprovider tests/test_adversarial_gpu.py tests/test_poison_gpu.py \
  tests/test_isolation.py --basetemp=/tmp/gputests2 2>&1 | tail -40 > "$out/gpu-tests-call2.log"
