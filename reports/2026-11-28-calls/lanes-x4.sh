#!/usr/bin/env bash
# Superseded by ../2026-11-28-kept-workers/next-x4.sh, which runs these two settings and --start-ahead in one call.
# Lanes per GPU on a 4-GPU host (issue 28's scaling), on nvidia-h200-x4: the README main job (Triton references
# against eager, large shapes timed) with --gpus all twice in one call, each stopped at LIMIT s: the default
# lanes (HOST_LANES 16 shared: 4 per GPU) and --lanes 8 per GPU. Why: call 34 scaled 2.73x over one GPU with
# the lanes 93% busy and each GPU 39-41% busy, so the lanes, not the GPUs, bound it; the 16-lane cap came
# from 12 lanes per GPU (48) against 4 (16) on an older engine (reports/2026-11-27-main-job-4gpu), and 8 was
# never measured. Both runs take the plan in the same order (throughput.py), so units per second compare.
# It is scaling-x2.sh's run with its two runs replaced (its files: scaling.log, summary.json, scaling.tgz).
#   LIMIT=200 bash reports/2026-11-28-calls/lanes-x4.sh        # kind nvidia-h200-x4; counts in full
ORDER= VARIANTS="lanes4=--gpus all;lanes8=--gpus all --lanes ${LANES:-8}" LIMIT="${LIMIT:-200}" \
  exec bash "$(dirname "$0")/scaling-x2.sh"
