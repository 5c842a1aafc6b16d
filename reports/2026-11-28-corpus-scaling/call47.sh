#!/usr/bin/env bash
# One H200 (kind nvidia-h200), twelfth session of 2026-11-28: a Triton compile inside a candidate's call steps
# out of the device hold (160ae45), on the KernelBench-X corpus (64 GEAK candidates and their eager baselines):
# this tree with its default (--build-hold release: the compile is host work) against the same tree with
# --build-hold keep (every build under the hold, as before 160ae45 for Triton), one after the other, each
# stopped at LIMIT s if it has not ended. Carry .bench/kbx.
#   LIMIT=190 bash reports/2026-11-28-corpus-scaling/call47.sh
set -uo pipefail
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
VARIANT="keep=--build-hold keep" LIMIT=${LIMIT:-190} OUT="$out" bash reports/2026-11-28-calls/kbx-corpus.sh
python3 - "$out/kbx-summary.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
for label, r in summary["runs"].items():
    print(f"{label}: exit {r.get('exit')}, {r.get('units')} units ({r.get('candidate_units')} candidates) in "
          f"{r.get('wall_s')} s; phases {r.get('timing_phases')}; lock waits {r.get('lock_wait_share')}; "
          f"verdicts {r.get('verdicts')}")
PY
