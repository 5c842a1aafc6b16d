#!/usr/bin/env bash
# Kept compile-ahead workers (this tree) against the previous main (PREV, a `git archive` of it), on the README main
# job (Triton references against eager, large shapes timed): one run after the other in one device call, each
# stopped at LIMIT s, the plan taken in the same order, so units finished compare directly. GPUS goes to --gpus.
#   git archive a601159 core backends tasks hardware_profiles | (mkdir -p .bench/prev-kept && tar -x -C .bench/prev-kept)
#   GPUS=all LIMIT=240 bash reports/2026-11-28-kept-workers/run.sh    # nvidia-h200-x4 (counts in full); carry .bench/prev-kept
#   GPUS=0 LIMIT=270 bash reports/2026-11-28-kept-workers/run.sh      # nvidia-h200
#   GPUS=0 LIMIT=180 VARIANTS="ahead=--start-ahead" bash reports/2026-11-28-kept-workers/run.sh   # and a third run
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
rm -rf /tmp/kept
# VARIANTS="LABEL=ARGS;LABEL=ARGS": this tree again with ARGS added, after the runs ORDER names (e.g. ahead=--start-ahead)
IFS=';' read -ra variants <<< "${VARIANTS:-}"
runs=(); for v in "${variants[@]}"; do runs+=(--variant "$v"); done
python3 benchmarks/throughput.py --previous "$PWD/${PREV:-.bench/prev-kept}" --out /tmp/kept --order "${ORDER-previous,this}" \
  --limit "${LIMIT:-240}" "${runs[@]}" -- --backend triton --hw auto --baselines eager --time-role large --gpus "${GPUS:-0}" \
  > "$out/kept.log" 2>&1
cp /tmp/kept/summary.json "$out/summary.json"
for s in /tmp/kept/*.sqlite; do python3 -m mkbench analyze engine --store "$s" > "$out/$(basename "${s%.sqlite}")-engine.md" 2>&1; done
rm -rf /tmp/kept/*-cache
tar -czf "$out/stores.tgz" --exclude="*-cache" -C /tmp kept
# per run: units, and the compile-ahead steps of its candidate units (s per unit) beside the lanes' CUDA starts
python3 - /tmp/kept/*.sqlite <<'PY' | tee "$out/compile-ahead.txt"
import json, sqlite3, statistics, sys
keys = ("compile_queue", "compile_ahead", "compile_ahead_start", "compile_ahead_build", "cpu_compile_ahead", "start_cuda_init")
for path in sys.argv[1:]:
    db = sqlite3.connect(path)
    units, pools = {}, []
    for task, backend, extra in db.execute("select task, backend, extra from results"):
        steps = (json.loads(extra or "{}").get("unit_seconds") or {}).get("steps")
        if steps and backend != "eager":
            units.setdefault(task, steps)
    for (env,) in db.execute("select env from runs"):
        pools += [s.get("compile_pool") for s in (json.loads(env or "{}").get("engine_clock") or {}).get("sessions") or []]
    done = db.execute("select count(*) from units").fetchone()[0]
    means = {k: round(statistics.mean(s.get(k, 0.0) for s in units.values()), 2) for k in keys} if units else {}
    print(f"{path}: {done} units finished, {len(units)} candidate units; per candidate unit {means}; pool {pools}")
PY
tail -n 5 "$out/kept.log"
