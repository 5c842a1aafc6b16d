#!/usr/bin/env bash
# Not run yet (written in the ninth session, after its device time was spent): do KernelBench-X's harness tasks time
# the same twice? Call 36 found that they do not: over 111 rows timed in both of its arms, 12% within 3% (call 31's
# arms: 10%), kbx_leaky_relu's eager 1.8 ms in one and 64.9 ms in the other, each with a low spread inside its own run.
# Every such row is host-bound (a Python harness loop), while the main job's device-bound rows repeat (96% within 3%
# between calls 34's two runs). Suspect: other lanes' host work (worker starts with their CUDA contexts, the
# compile-ahead pool, the judges) during a host-bound timed step. The arms' run seeds also differed.
# This call runs the corpus four times on one H200 with the same --seed (throughput.py's variants, one after the
# other, each stopped at LIMIT s): twice with the default lanes (a, b), twice with 2 lanes and 1 compile-ahead worker
# (q1, q2), and compares each pair with `python -m mkbench.harness_bench repeatability` (|log ratio| of the
# candidates' times and speedups over the rows both timed). If a and b agree, the differing seeds were the cause;
# if they do not and q1 and q2 do, the lanes' host work is; if neither pair agrees, the harness's own loop is
# (the timer would then need more samples or a host-quiet step). Carry .bench/kbx. The runs are kbx-corpus.sh's.
#   LIMIT=130 bash reports/2026-11-28-calls/repeat-kbx.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
seed=${SEED:-11}
quiet="--seed $seed --lanes 2 --compile-workers 1"
# kbx-corpus.sh's run, its files kept aside: a call brings back 8 files, and four engine tables would crowd them
rm -rf /tmp/rep-out
OUT=/tmp/rep-out ORDER= VARIANTS="a=--seed $seed;b=--seed $seed;q1=$quiet;q2=$quiet" LIMIT="${LIMIT:-130}" \
  bash "$(dirname "$0")/kbx-corpus.sh" > /dev/null
cp /tmp/rep-out/{device.txt,kbx-throughput.log,kbx-summary.json,kbx-a-engine.md,kbx-q1-engine.md,kbx-stores.tgz} "$out/"
for pair in "a b" "q1 q2" "a q1"; do
  set -- $pair
  echo "== $1 / $2"
  python3 -m mkbench.harness_bench repeatability "/tmp/kbx/$1.sqlite" "/tmp/kbx/$2.sqlite"
done > "$out/repeatability.txt" 2>&1
cat "$out/repeatability.txt"
