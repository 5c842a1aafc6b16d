#!/usr/bin/env bash
# Issue 28, second 4-GPU call: why a worker's CUDA start is slow on this host (cuda_init_probe.py), then
# the same candidates timed on each of the 4 GPUs at once (../2026-11-28-gpu-consistency/run.sh,
# concurrent pass, LIMIT s). At most 8 files come back: device.txt, probe.json, probe.log,
# consistency.txt, consistency-summary.json, clocks.txt, consistency.tgz (the four stores and logs).
#   LIMIT=220 bash reports/2026-11-27-main-job-4gpu/run2.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
bash .ci/setup > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,persistence_mode,compute_mode,pci.bus_id,clocks.max.sm,memory.total \
    --format=csv; nproc; uname -r; cat /proc/driver/nvidia/version; nvidia-smi topo -m; lscpu | head -24; } > "$out/device.txt" 2>&1
timeout 200 python3 reports/2026-11-27-main-job-4gpu/cuda_init_probe.py > "$out/probe.json" 2> "$out/probe.log"
echo "probe: exit $?" >> "$out/probe.log"
c=/tmp/consistency
PASS=concurrent LIMIT="${LIMIT:-220}" OUT=$c bash reports/2026-11-28-gpu-consistency/run.sh > "$out/consistency.txt" 2>&1
cp "$c/concurrent/summary.json" "$out/consistency-summary.json" 2>/dev/null
cp "$c/clocks.txt" "$out/" 2>/dev/null
tar -czf "$out/consistency.tgz" -C "$c" . 2>/dev/null
tail -5 "$out/probe.log"; tail -20 "$out/consistency.txt"
