#!/usr/bin/env bash
# One device call (issues 28, 29): validate the four tasks whose contracts changed since the last GPU
# validate (sdpa_gqa, moe_unpermute_combine) or that it ran apart (nll_loss_ignore_index,
# power_iteration), then the README main job cut at LIMIT s, whose rows now carry each unit's planned
# memory beside its judges' and worker's allocator peaks (extra.unit_memory): the data the memory
# budget's estimate is to be set by.
#   VLIMIT=110 LIMIT=430 TREE=<commit> bash reports/2026-11-27-main-job-memory/run.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
here=$(dirname "$0")
out=${OUT:-results}
mkdir -p "$out"
bash .ci/setup > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
start=$(date +%s)
timeout -s TERM "${VLIMIT:-110}" python3 -m mkbench validate --device cuda --jobs 2 \
  --task sdpa_gqa --task moe_unpermute_combine --task nll_loss_ignore_index --task power_iteration \
  --summary "$out/validate-summary.json" > "$out/validate.txt" 2> "$out/validate-progress.txt"
echo "exit $?, wall $(( $(date +%s) - start )) s" >> "$out/validate.txt"
tail -3 "$out/validate.txt"
OUT="$out/job" LIMIT="${LIMIT:-430}" bash reports/2026-11-27-main-job-preload/run.sh
