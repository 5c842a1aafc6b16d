#!/usr/bin/env bash
# One GPU (issue 28): the README main job's first LIMIT s on this tree alone, for the judge's seconds by
# part (94f1caa) and how busy the GPU was (8e72533): both are new measurements, nothing to compare.
#   LIMIT=150 bash reports/2026-11-28-calls/call10.sh          # no carry needed
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
python3 benchmarks/throughput.py --previous . --order this --out /tmp/tp --limit "${LIMIT:-150}" \
  -- --hw auto --baselines eager --time-role large 2>&1 | tee "$out/throughput.log"
cp /tmp/tp/summary.json "$out/"
{ echo "## this"; python3 -m mkbench analyze engine --store /tmp/tp/this.sqlite; } > "$out/engine.md" 2>&1
grep -h "^engine:\|^| judge" "$out/engine.md"
tar -czf "$out/throughput.tgz" --exclude='*-cache' -C /tmp tp
