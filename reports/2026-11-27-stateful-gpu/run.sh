#!/usr/bin/env bash
# Issue 29's stateful references on a GPU, before and after the fix, in one device call: CUDA-L1's
# h100 rows for KernelBench level 3's recurrent problems (33, 34: VanillaRNN, whose forward assigns
# self.hidden; 35-42: LSTMs and GRUs with float32 hidden state under the float64 judge), each
# candidate and its eager baseline on ONE lane, so both go through one judge, as they can in any run.
#   before: the tree of PREV (.bench/prev, an export of that commit, carried), on PYTHONPATH
#   after:  this tree, installed editable
# Carry .bench/cudal1/h100.json and .bench/prev. Files under $OUT: device.txt, import.log, the two
# stores and logs, compare.txt.
#   bash reports/2026-11-27-stateful-gpu/run.sh         (TASKS=a,b: other tasks; ONLY=after: no "before" run)
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; echo "tree ${TREE:-?}, before: $(cat .bench/prev/COMMIT)"; } \
  > "$out/device.txt" 2>&1
tasks=${TASKS:-kb_l3_33,kb_l3_34,kb_l3_35,kb_l3_37,kb_l3_39,kb_l3_40,kb_l3_41,kb_l3_42}
work=/tmp/stateful-work
python3 -m mkbench import kernelbench .bench/cudal1/h100.json --out $work/tasks --solutions-out $work/sol \
  --gpu-set h100 --variant default > "$out/import.log" 2>&1
echo "import exit $?" >> "$out/import.log"
prev=/tmp/prevroot/mkbench
mkdir -p $prev
for f in "$PWD"/.bench/prev/core/*; do ln -sf "$f" $prev/; done
for d in backends tasks hardware_profiles; do ln -sfn "$PWD/.bench/prev/$d" $prev/$d; done
run() {  # $1: name; the rest: the environment
  local name=$1; shift
  local t=$(date +%s)
  env "$@" timeout -s TERM "${DEADLINE:-200}" python3 -m mkbench run --backend cuda --hw auto --tasks-dir $work/tasks \
    --solutions $work/sol --method cuda-l1-h100 --task "$tasks" --baselines eager --time-role large --lanes 1 \
    --store "$out/$name.sqlite" --no-progress > "$out/$name.log" 2>&1
  echo "exit $?, $(( $(date +%s) - t )) s" >> "$out/$name.log"
}
runs=${ONLY:-before after}  # ONLY=after: this tree alone
[[ " $runs " == *" before "* ]] && run before PYTHONPATH=/tmp/prevroot
[[ " $runs " == *" after "* ]] && run after
for s in $runs; do
  echo "== $s"
  sqlite3 "$out/$s.sqlite" "select task, method, shape, verdict, substr(coalesce(error, ''), 1, 160),
    substr(coalesce(json_extract(extra, '$.unchecked'), ''), 1, 120) from results order by task, method" 2>&1 \
    || python3 - "$out/$s.sqlite" <<'PY'
import sqlite3, sys, json
for r in sqlite3.connect(sys.argv[1]).execute("select task, method, shape, verdict, error, extra from results order by task, method"):
    print(r[0], r[1], r[2], r[3], (r[4] or "")[:160], (json.loads(r[5] or "{}").get("unchecked") or "")[:120], sep=" | ")
PY
done > "$out/compare.txt"
cat "$out/compare.txt"
