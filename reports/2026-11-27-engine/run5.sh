#!/usr/bin/env bash
# Device call 5 (issue 29): `mkbench validate --device cuda` again over the 41 tasks that call 3 did
# not pass (out of memory at --jobs 6, TF32 convolutions, atomics, the contracts re-derived since),
# power_iteration left out (176 s alone). Out-of-memory validations are now retried alone.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; git log -1 --format=%H; } \
  > "$out/device5.txt" 2>&1
args=()
for t in $(tr , ' ' < reports/2026-11-27-engine/rerun-tasks.txt); do args+=(--task "$t"); done
timeout "${VALIDATE_S:-500}" python3 -m mkbench validate --device cuda --jobs 4 "${args[@]}" \
  > "$out/validate-cuda-rerun.txt" 2> "$out/validate-cuda-rerun-progress.txt"
echo "exit $?" >> "$out/validate-cuda-rerun.txt"
