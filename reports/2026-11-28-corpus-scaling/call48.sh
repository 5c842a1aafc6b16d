#!/usr/bin/env bash
# 4x H200 (kind nvidia-h200-x4, counts in full), twelfth session of 2026-11-28, with the session's last device time:
# the README main job on every GPU with --timing-batch 2 (two units per timing phase; 4 lanes per GPU make the
# default 1), once, stopped at LIMIT s if it has not ended: its wall time against call 46's default run of the same
# tree (another call), and main_job_seconds_4gpu if it ends by itself. GPM samples as in call46.sh.
#   LIMIT=290 bash reports/2026-11-28-corpus-scaling/call48.sh
set -uo pipefail
ORDER= VARIANTS="batch2=--gpus all --timing-batch 2" LIMIT=${LIMIT:-290} bash reports/2026-11-28-corpus-scaling/call46.sh
