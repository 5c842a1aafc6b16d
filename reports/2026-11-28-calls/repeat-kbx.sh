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
# (the timer would then need more samples or a host-quiet step). Carry .bench/kbx.
#   LIMIT=130 bash reports/2026-11-28-calls/repeat-kbx.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
kbx=$PWD/.bench/kbx
seed=${SEED:-11}
python3 benchmarks/throughput.py --previous . --out /tmp/rep --order "" --limit "${LIMIT:-130}" \
  --variant "a=--seed $seed" --variant "b=--seed $seed" --variant "q1=--seed $seed --lanes 2 --compile-workers 1" \
  --variant "q2=--seed $seed --lanes 2 --compile-workers 1" \
  -- --hw auto --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" --method geak --baselines eager \
  --task "$(cat "$kbx/tasks.txt")" > "$out/repeat-throughput.log" 2>&1
cp /tmp/rep/summary.json "$out/repeat-summary.json"
for pair in "a b" "q1 q2" "a q1"; do
  set -- $pair
  echo "== $1 / $2"
  python3 -m mkbench.harness_bench repeatability "/tmp/rep/$1.sqlite" "/tmp/rep/$2.sqlite"
done > "$out/repeatability.txt" 2>&1
for s in a q1; do python3 -m mkbench analyze engine --store "/tmp/rep/$s.sqlite" > "$out/$s-engine.md" 2>&1; done
tar -czf "$out/repeat-stores.tgz" --exclude='*-cache' -C /tmp rep
cat "$out/repeatability.txt"
