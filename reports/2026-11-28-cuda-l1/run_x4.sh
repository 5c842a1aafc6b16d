#!/usr/bin/env bash
# CUDA-L1's h100 set, all three variants (issue 30, part 1), on every GPU of a multi-GPU host in one
# device call (not run yet). One import with --variant all (one solutions folder per variant, each its
# own method), then one `mkbench run --gpus all` per variant into ONE store (the eager baselines are
# measured once and reused: the baseline cache), each stopped at its share of DEADLINE s and carried
# on by the next call (--resume) if cut. Lanes: the default, 4 per GPU on 4 GPUs (HOST_LANES; with 12
# per GPU CUDA starts queued host-wide, reports/2026-11-27-main-job-4gpu). The report is built here,
# not on the device (it can outlast the call). At most 8 files come back: device.txt, import.log,
# runs.log, cudal1.sqlite, cuda-l1.md, summary.json.
#   carry .bench/cudal1/h100.json;   SET=h100 DEADLINE=480 bash reports/2026-11-28-cuda-l1/run_x4.sh
#   a later call: STORE=<the store it brought back> ADOPT=1 ... (its digest key stayed on that machine)
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
gpu_set=${SET:-h100}
src=.bench/cudal1/$gpu_set.json
work=/tmp/cudal1-x4
store=$work/cudal1.sqlite
mkdir -p "$out" "$work"
[ -f "$src" ] || { echo "no $src: carry it (see run.sh)" >&2; exit 2; }
[ -n "${STORE:-}" ] && cp "$STORE" "$store"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
python3 -m mkbench import kernelbench "$src" --out "$work/tasks" --solutions-out "$work/sol" --gpu-set "$gpu_set" \
  --variant all > "$out/import.log" 2>&1
echo "import exit $?" >> "$out/import.log"
variants=(default cuda_graph cudnn)
share=$(( ${DEADLINE:-480} / ${#variants[@]} ))
for v in "${variants[@]}"; do
  method=cuda-l1-$gpu_set; [ "$v" != default ] && method=$method-$v
  start=$(date +%s)
  timeout -s TERM "$share" python3 -m mkbench run --backend cuda --hw auto --tasks-dir "$work/tasks" \
    --solutions "$work/sol/$v" --method "$method" --baselines eager --time-role large --gpus all \
    --store "$store" --resume ${ADOPT:+--adopt-store} --no-progress >> "$out/runs.log" 2>&1
  echo "$v: exit $?, $(( $(date +%s) - start )) s" | tee -a "$out/runs.log"
done
for _ in $(seq 60); do pgrep -f "mkbench run" > /dev/null || break; sleep 1; done
python3 -c "import sqlite3; sqlite3.connect('$store').execute('PRAGMA wal_checkpoint(TRUNCATE)')"
cp "$store" "$out/cudal1.sqlite"
python3 -m mkbench analyze cuda-l1 --store "$store" --json "$out/summary.json" > "$out/cuda-l1.md" 2>&1
head -20 "$out/cuda-l1.md"
