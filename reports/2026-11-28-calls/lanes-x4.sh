#!/usr/bin/env bash
# Lanes per GPU on a 4-GPU host (issue 28's scaling), on nvidia-h200-x4: the README main job (Triton references
# against eager, large shapes timed) with --gpus all twice in one call, each stopped at LIMIT s: the default
# lanes (HOST_LANES 16 shared: 4 per GPU) and --lanes 8 per GPU. Why: call 34 scaled 2.73x over one GPU with
# the lanes 93% busy and each GPU 39-41% busy, so the lanes, not the GPUs, bound it; the 16-lane cap came
# from 12 lanes per GPU (48) against 4 (16) on an older engine (reports/2026-11-27-main-job-4gpu), and 8 was
# never measured. Both runs take the plan in the same order (throughput.py), so units per second compare.
#   LIMIT=200 bash reports/2026-11-28-calls/lanes-x4.sh        # kind nvidia-h200-x4; counts in full
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
python3 benchmarks/throughput.py --previous . --out /tmp/lanes --order "" --limit "${LIMIT:-200}" \
  --variant "lanes4=--gpus all" --variant "lanes8=--gpus all --lanes ${LANES:-8}" \
  -- --backend triton --hw auto --baselines eager --time-role large > "$out/lanes.log" 2>&1
cp /tmp/lanes/summary.json "$out/summary.json"
for s in /tmp/lanes/*.sqlite; do python3 -m mkbench analyze engine --store "$s" > "${s%.sqlite}-engine.md" 2>&1; done
rm -rf /tmp/lanes/*-cache
tar -czf "$out/lanes.tgz" --exclude="*-cache" -C /tmp lanes
python3 - "$out/summary.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
for label, r in runs.items():
    print(f"{label}: {r['units']} units in {r['wall_s']} s = {r['units'] / r['wall_s']:.3f} units/s; "
          f"reference hack {r['reference_hack_rows']}, framework {r['reference_framework_rows']}; "
          f"lock waits {r['lock_wait_share']}, GPU busy {[g['busy_mean'] for g in r['gpu_busy']['gpus'].values()]}")
PY
