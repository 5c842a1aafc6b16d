#!/usr/bin/env bash
# CUDA-L1's released kernels across hardware (issue 30, part 1), not yet run: one GPU set and
# variant of CUDA-L1's optimized_cuda_code/<set>.json imported with the row importer, run with the
# CUDA backend against eager on every GPU of the machine, then `mkbench analyze cuda-l1`
# (cuda-l1.md, summary.json) and the report.
#
# CUDA-L1's files are not on the device (no network): carry them in .bench/cudal1/ (ignored by
# git), e.g. run's carry [".bench/cudal1"]. Fill it here, once, from the public repository:
#   fetch github:deepreinforce-ai/CUDA-L1 (the fetch tool gives a git directory, GITDIR), then
#   mkdir -p .bench/cudal1 && git --git-dir="$GITDIR" archive HEAD optimized_cuda_code \
#     | tar -x -C /tmp && cp /tmp/optimized_cuda_code/*.json .bench/cudal1/
#
# Device call:
#   SET=h100 VARIANT=default bash reports/2026-11-28-cuda-l1/run.sh
# SET: a100, h100, h20, l40 or 3090 (the file's stem, recorded as each candidate's GPU set);
# VARIANT: default, cuda_graph or cudnn; TASKS: optional comma-separated task names (kb_l1_19,...);
# TASKS_FILE: the same, one name per line (h200-rest.txt: the set's tasks call 2's H200 store lacks);
# CONTRACT: mkbench (default), cuda-l1 (CUDA-L1's own atol = rtol = 1e-2, the like-for-like verdicts
# against its recorded scores) or kernelbench (KernelBench's own atol = rtol = 1e-4 on raw values: the
# like-for-like verdicts against CUDA-L1's claims; its own tasks folder, and a store of its own to
# analyse apart, since both stores hold the same kernels on the same device);
# DEADLINE: seconds for the run (default 480). A run cut off goes on in a later call with STORE
# naming the earlier call's store, carried back into the working tree (--resume; ADOPT=1 where its
# digest key stayed on the machine that wrote it: --adopt-store); ANALYZE_STORES:
# more stores (other sets, other devices) to analyse with this one, space-separated.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
[ -n "${TASKS_FILE:-}" ] && TASKS=$(paste -sd, "$TASKS_FILE")
src=${CUDAL1:-.bench/cudal1}
gpu_set=${SET:-h100}
variant=${VARIANT:-default}
contract=${CONTRACT:-mkbench}
suffix=$([ "$contract" = mkbench ] || echo "-$contract")
store=${STORE:-$out/cudal1$suffix.sqlite}
mkdir -p "$out" "$(dirname "$store")"
if [ ! -f "$src/$gpu_set.json" ]; then
  echo "no $src/$gpu_set.json: carry CUDA-L1's optimized_cuda_code/*.json in $src (see the top of this script)" >&2
  exit 2
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; git rev-parse HEAD 2>/dev/null; } \
  > "$out/device.txt" 2>&1
# The tasks are named by level and problem number (no KernelBench checkout here, so no
# --names-from): the same names on every device and for every set, which the study pairs on.
work=.bench/cudal1-import
python3 -m mkbench import kernelbench "$src/$gpu_set.json" --out "$work/tasks$suffix" --solutions-out "$work/$gpu_set-$variant" \
  --gpu-set "$gpu_set" --variant "$variant" --contract "$contract" > "$out/import.log" 2>&1
echo "import exit $? (3: some rows skipped or without code, listed in import.log)" >> "$out/import.log"
tail -4 "$out/import.log"
method=cuda-l1-$gpu_set
[ "$variant" != default ] && method=$method-$variant
start=$(date +%s)
timeout -s TERM "${DEADLINE:-480}" python3 -m mkbench run --backend cuda --hw auto --tasks-dir "$work/tasks$suffix" \
  --solutions "$work/$gpu_set-$variant" --method "$method" ${TASKS:+--task "$TASKS"} --baselines eager \
  --time-role large --gpus all --store "$store" --resume ${ADOPT:+--adopt-store} --no-progress > "$out/run-$method.log" 2>&1
echo "exit $?, $(( $(date +%s) - start )) s" >> "$out/run-$method.log"
tail -3 "$out/run-$method.log"
[ "$store" != "$out/cudal1$suffix.sqlite" ] && cp "$store" "$out/cudal1$suffix.sqlite"  # the store comes back with $OUT
stores=(--store "$store")
for s in ${ANALYZE_STORES:-}; do [ -f "$s" ] && stores+=(--store "$s"); done
python3 -m mkbench analyze cuda-l1 "${stores[@]}" --json "$out/summary.json" > "$out/cuda-l1.md" 2>&1
title="CUDA-L1 $gpu_set ($variant) on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
# NO_REPORT=1: the report is built afterwards from the store that came back (it can outlast the call)
[ -n "${NO_REPORT:-}" ] || python3 -m mkbench report "${stores[@]}" --title "$title" -o "$out/report.md" > /dev/null 2>&1
head -12 "$out/cuda-l1.md"
