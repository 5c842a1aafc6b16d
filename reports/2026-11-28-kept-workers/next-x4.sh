#!/usr/bin/env bash
# Not run yet (written after this session's device time was spent). On nvidia-h200-x4 (counts in full): what
# bounds the README main job on 4 GPUs now that compile-ahead workers are kept (call 40: 16 lanes 89% busy, each
# GPU 39-53% busy, 2.94x over one GPU). Three runs of this tree with --gpus all, one after the other, each
# stopped at LIMIT s, the plan in the same order: the default lanes (4 per GPU), --start-ahead (each unit's
# worker started while it waits for a lane), and 8 lanes per GPU. It is scaling-x2.sh's run with its runs
# replaced (its files: scaling.log, summary.json, scaling.tgz); summary.json's seconds_per_kernel_by_run
# compares them.
#   LIMIT=170 bash reports/2026-11-28-kept-workers/next-x4.sh
ORDER= VARIANTS="lanes4=--gpus all;ahead=--gpus all --start-ahead;lanes8=--gpus all --lanes ${LANES:-8}" \
  LIMIT="${LIMIT:-170}" exec bash "$(dirname "$0")/../2026-11-28-calls/scaling-x2.sh"
