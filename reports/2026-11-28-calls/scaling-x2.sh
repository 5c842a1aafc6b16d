#!/usr/bin/env bash
# Not run yet (written 2026-11-28, no device time left): issue 28's scaling figure where no 4-GPU kind is
# lent, on nvidia-h200-x2 (or -x4: RUN_GPUS=all takes every GPU). The README main job (Triton references
# against eager, large shapes timed), the same tree twice in one call with benchmarks/throughput.py: on GPU
# 0 alone (the default --gpus 0), then on every GPU (--gpus all), each stopped at LIMIT s; both take the plan
# in the same order, so units finished per second compare directly (summary.json: runs.this / runs.all).
# Then benchmarks/gpu_consistency.py on what is left of the call is run by
# ../2026-11-28-gpu-consistency/run.sh in a call of its own (PASS=concurrent LIMIT=200).
#   LIMIT=230 bash reports/2026-11-28-calls/scaling-x2.sh        # kind nvidia-h200-x2; counts in full
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
# ORDER and VARIANTS="LABEL=ARGS;LABEL=ARGS" replace the two runs (lanes-x4.sh: two settings of --gpus all)
IFS=';' read -ra variants <<< "${VARIANTS:-all=--gpus ${RUN_GPUS:-all}}"
runs=(); for v in "${variants[@]}"; do runs+=(--variant "$v"); done
python3 benchmarks/throughput.py --previous . --out /tmp/scaling --order "${ORDER-this}" --limit "${LIMIT:-230}" \
  "${runs[@]}" -- --backend triton --hw auto --baselines eager --time-role large > "$out/scaling.log" 2>&1
cp /tmp/scaling/summary.json "$out/summary.json"
for s in /tmp/scaling/*.sqlite; do python3 -m mkbench analyze engine --store "$s" > "${s%.sqlite}-engine.md" 2>&1; done
rm -rf /tmp/scaling/*-cache
tar -czf "$out/scaling.tgz" --exclude="*-cache" -C /tmp scaling
python3 - "$out/summary.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
for label, r in summary["runs"].items():
    busy = [g["busy_mean"] for g in ((r.get("gpu_busy") or {}).get("gpus") or {}).values()]
    print(f"{label} ({r.get('gpus')} GPU(s)): {r.get('units')} units in {r.get('wall_s')} s; reference hack "
          f"{r.get('reference_hack_rows')}, framework {r.get('reference_framework_rows')}; lock waits "
          f"{r.get('lock_wait_share')}; GPU busy {busy}")
print("scaling over the one-GPU run:", summary.get("scaling_by_run") or "no one-GPU run to compare with")
PY
