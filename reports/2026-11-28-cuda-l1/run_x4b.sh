#!/usr/bin/env bash
# CUDA-L1 on every GPU of a multi-GPU host, from kernels imported beforehand on a CPU machine (issue 30,
# part 1). The first 4-GPU call (run_x4.sh) imported on the device: three variants took some 230 s of
# its 600, and its store, kept outside $OUT until the end, was lost when the call ran out of time.
# Here the store is written in $OUT from the start (a cut call still brings back what finished), and
# every run gets what is left of DEADLINE seconds, so the call ends inside its limit.
#
# Import here first (about a minute per set and variant on 2 cores; the tasks are the same for every
# set but for their docstring, so one tasks folder serves them all and the eager baselines are reused):
#   mkbench import kernelbench .bench/cudal1/h100.json --out .bench/x4/tasks --solutions-out .bench/x4/sol \
#     --gpu-set h100 --variant all
#   mkbench import kernelbench .bench/cudal1/a100.json --out /tmp/x4-tasks-a100 --solutions-out .bench/x4/sol-a100 \
#     --gpu-set a100 --variant default          # and the same for h20 (sol-h20)
# Device call (carry .bench/x4; RUNS: "solutions-folder:method ..." in order; TASKS: optional
# comma-separated task names; STORE: an earlier call's store to go on with, ADOPT=1 where its key stayed
# on the machine that wrote it):
#   DEADLINE=540 bash reports/2026-11-28-cuda-l1/run_x4b.sh
# Next (not run yet): the six cudnn-variant kernels called `hack` in call 7, with the trace's new cap
# (686ef57): their unit logs say how many device events each trace had ("N on the device (K kept)")
#   RUNS=sol/cudnn:cuda-l1-h100-cudnn-probe TASKS=kb_l2_6,kb_l2_24,kb_l2_43,kb_l2_79,kb_l2_83,kb_l3_16 \
#     DEADLINE=150 bash reports/2026-11-28-cuda-l1/run_x4b.sh      # on one GPU or four
# torch.compile for 40 tasks (compile40.txt: the first 40 by level and number whose default-variant
# kernel had a right answer on both the H100 and the H200, with eager right on both), on each card:
#   RUNS=sol/default:cuda-l1-h100 TASKS=$(paste -sd, reports/2026-11-28-cuda-l1/compile40.txt) \
#     BASELINES=eager,torch_compile DEADLINE=400 bash reports/2026-11-28-cuda-l1/run_x4b.sh
# CUDA-L1's own judgement (--contract cuda-l1: allclose 1e-2, models in eval mode), its own tasks and
# candidates and a store of its own (analysed apart: the same kernels on the same device):
#   mkbench import kernelbench .bench/cudal1/h100.json --out .bench/x4/tasks-cl1 --solutions-out \
#     .bench/x4/sol-cl1 --gpu-set h100 --variant default --contract cuda-l1        # here, first
#   TASKS_DIR=tasks-cl1 RUNS=sol-cl1:cuda-l1-h100 DEADLINE=400 bash reports/2026-11-28-cuda-l1/run_x4b.sh
# then the rest of the a100 set and the h20 set into call 7's store:
#   ADOPT=1 STORE=reports/2026-11-28-cuda-l1/call7-x4-h100/cudal1.sqlite RUNS="sol-a100:cuda-l1-a100 \
#     sol-h20:cuda-l1-h20" DEADLINE=540 bash reports/2026-11-28-cuda-l1/run_x4b.sh
# Next (2026-11-28, second session; not run yet): on an H100 (one or more), the a100 set's rest (its H100
# run resumes) and the h20, l40 and 3090 sets (imported like the a100 set: sol-h20, sol-l40, sol-3090),
# into call 9's store, which holds call 7's records:
#   ADOPT=1 STORE=reports/2026-11-28-cuda-l1/call9-x2-h200/sets/cudal1.sqlite RUNS="sol-a100:cuda-l1-a100 \
#     sol-h20:cuda-l1-h20 sol-l40:cuda-l1-l40 sol-3090:cuda-l1-3090" DEADLINE=540 bash reports/2026-11-28-cuda-l1/run_x4b.sh
# Call 14 (2026-11-28, third session), one H100, the three sets never run, each sampled (its first tasks)
# in an equal share of the call (carry .bench/x4/tasks, .bench/x4/sol-h20, .bench/x4/sol-l40, .bench/x4/sol-3090):
#   SPLIT=1 ADOPT=1 STORE=reports/2026-11-28-cuda-l1/call9-x2-h200/sets/cudal1.sqlite RUNS="sol-h20:cuda-l1-h20 \
#     sol-l40:cuda-l1-l40 sol-3090:cuda-l1-3090" DEADLINE=540 bash reports/2026-11-28-cuda-l1/run_x4b.sh
# EXTRA="...": more mkbench run options (e.g. --trace-call first). LANES=N: lanes per GPU (mkbench run --lanes; default 12 on a 16-core H100 host). CUDA-L1 held its 12 lanes 87-90%
# busy with the GPU 9% and the host 51% busy (call 17): its lane time is mostly nvcc, so more lanes may pay.
# SHUFFLE=SEED: each run's tasks in a seeded random order (mkbench run --shuffle-tasks), so that a run stopped at
# its share holds a sample of every category rather than its first tasks (calls 14-15 sampled the first ones).
# (.bench/x4 with every set imported is 23 MB: carry only the folders a call needs, e.g. .bench/x4/tasks and
# .bench/x4/sol-a100 ..., so that the tree stays under the transfer's 64 MiB.)
# A multi-GPU machine took about 436 s to start in call 9, and held time counts: ask for one GPU unless
# `status` has just shown a multi-GPU kind starting quickly.
set -uo pipefail
export PYTHONUNBUFFERED=1
began=$(date +%s)
out=${OUT:-results}
x4=.bench/x4
store=$out/cudal1.sqlite
mkdir -p "$out"
tasks=$x4/${TASKS_DIR:-tasks}
[ -d "$tasks" ] || { echo "no $tasks: import first and carry $x4 (see the top of this script)" >&2; exit 2; }
[ -n "${STORE:-}" ] && cp "$STORE" "$store"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
runs=${RUNS:-"sol/cuda_graph:cuda-l1-h100-cuda_graph sol/cudnn:cuda-l1-h100-cudnn sol-a100:cuda-l1-a100 sol-h20:cuda-l1-h20"}
n_runs=$(wc -w <<< "$runs"); run_no=0
for r in $runs; do
  sol=${r%%:*}; method=${r##*:}
  left=$(( ${DEADLINE:-540} - ($(date +%s) - began) - 15 ))  # 15 s for the last run to save
  # A run told to stop took about 60 s to end on an H100 (call 14: TERM at 171 s, ended at 228-231 s);
  # since db33977 under 15 s (calls 17, 19): STOP_S is kept for that, per run still to go
  togo=$(( n_runs - run_no )); stop=${STOP_S:-20}
  # SPLIT=1: each run gets an equal part of what is left, so that every set is sampled (its first tasks)
  if [ -n "${SPLIT:-}" ]; then left=$(( (left - stop * togo) / togo )); else left=$(( left - stop )); fi
  run_no=$((run_no + 1))
  [ "$left" -lt 30 ] && { echo "$method: not started, $left s left" | tee -a "$out/runs.log"; continue; }
  start=$(date +%s)
  timeout -s TERM "$left" python3 -m mkbench run --backend cuda --hw auto --tasks-dir "$tasks" \
    --solutions "$x4/$sol" --method "$method" ${TASKS:+--task "$TASKS"} --baselines "${BASELINES:-eager}" --time-role large --gpus all ${SHUFFLE:+--shuffle-tasks "$SHUFFLE"} ${LANES:+--lanes "$LANES"} ${EXTRA:-} \
    --store "$store" --resume ${ADOPT:+--adopt-store} --no-progress >> "$out/runs.log" 2>&1
  echo "$method: exit $?, $(( $(date +%s) - start )) s" | tee -a "$out/runs.log"
done
for _ in $(seq 30); do pgrep -f "mkbench run" > /dev/null || break; sleep 1; done
python3 -c "import sqlite3; sqlite3.connect('$store').execute('PRAGMA wal_checkpoint(TRUNCATE)')"
# the store's cache and log folders sit beside it and took the call's file slots (call 7): the unit
# logs go back as one archive, the compiled cache stays
tar -czf "$out/unit-logs.tgz" -C "$out" cudal1-logs 2>/dev/null && rm -rf "$out/cudal1-logs"
rm -rf "$out/cudal1-cache"
grep -h "^engine:" "$out/runs.log"
