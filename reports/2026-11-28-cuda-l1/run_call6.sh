#!/usr/bin/env bash
# Next CUDA-L1 device call (not run yet): the h100 set's cuda_graph variant again, with the CUDA
# backend's workers warming cuBLAS and cuDNN before a candidate's first call (5525b70) and the
# hidden-work rule's slack (7b28c01). Call 4 (H100, b8142a1) had 152 capture failures and one false
# hack. On whichever card comes; name it in the README. Carry .bench/cudal1/h100.json.
#   DEADLINE=400 bash reports/2026-11-28-cuda-l1/run_call6.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
SET=h100 VARIANT=cuda_graph NO_REPORT=1 DEADLINE=${DEADLINE:-400} bash reports/2026-11-28-cuda-l1/run.sh
