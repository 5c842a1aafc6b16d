#!/usr/bin/env bash
# Not run yet (the sixth and seventh sessions of 2026-11-28 spent their device time on the portability matrix, the CUDA A/Bs and CUDA-L1),
# one H200: issue 28's corpus target
# (at least 50 Triton candidates that are not mkbench's, <= 2 s per kernel) on this tree alone. KernelBench-X's GEAK
# corpus, 66 candidates (reports/2026-11-27-engine/README.md says how .bench/kbx is imported); carry .bench/kbx.
#   LIMIT=150 bash reports/2026-11-28-calls/kbx-corpus.sh
# Side by side with the previous main in the same call (the issue's way to measure it): PREV=a `git archive` of it
# (carry that folder too), e.g. git archive 6883940 core backends tasks hardware_profiles | (mkdir -p
# .bench/prev-main-kbx && tar -x -C .bench/prev-main-kbx), then PREV=.bench/prev-main-kbx LIMIT=150 bash ...
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
kbx=$PWD/.bench/kbx
if [ -n "${PREV:-}" ]; then prev=(--previous "$PWD/$PREV" --order "${ORDER-previous,this}")
else prev=(--previous . --order "${ORDER-this}"); fi
# VARIANT="LABEL=ARGS", or VARIANTS="LABEL=ARGS;LABEL=ARGS": this tree again with ARGS added, after the runs ORDER
# names (default: this tree, after PREV's; ORDER= runs only the variants), one after the other
IFS=';' read -ra variants <<< "${VARIANTS:-${VARIANT:-}}"
for v in "${variants[@]}"; do prev+=(--variant "$v"); done
python3 benchmarks/throughput.py "${prev[@]}" --out /tmp/kbx --limit "${LIMIT:-150}" -- --hw auto \
  --tasks-dir "$kbx/kbx_tasks" --solutions "$kbx/kbx_sol" --method geak --baselines eager \
  --task "$(cat "$kbx/tasks.txt")" > "$out/kbx-throughput.log" 2>&1
cp /tmp/kbx/summary.json "$out/kbx-summary.json"
[ -f /tmp/kbx/this.sqlite ] && python3 -m mkbench analyze engine --store /tmp/kbx/this.sqlite > "$out/kbx-engine.md" 2>&1
for v in "${variants[@]}"; do
  python3 -m mkbench analyze engine --store "/tmp/kbx/${v%%=*}.sqlite" > "$out/kbx-${v%%=*}-engine.md" 2>&1
done
tar -czf "$out/kbx-stores.tgz" --exclude='*-cache' -C /tmp kbx
tail -n 30 "$out/kbx-throughput.log"
