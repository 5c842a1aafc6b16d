#!/usr/bin/env bash
# Call 4 on ONE GPU: the memory plan's factors 6 and 3 (881f7b7) against 8 and 4 (.bench/prev =
# git archive 40666d6: the judge already compares in slices), the README main job's first LIMIT s each.
#   git archive 40666d6 core backends tasks hardware_profiles | tar -x -C .bench/prev   # here, first
#   LIMIT=115 bash reports/2026-11-27-compile-ahead/run4.sh                            # carry .bench/prev
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
python3 benchmarks/throughput.py --previous .bench/prev --out /tmp/tp --limit "${LIMIT:-115}" \
  -- --hw auto --baselines eager --time-role large 2>&1 | tee "$out/throughput.log"
cp /tmp/tp/summary.json "$out/"
for label in previous this; do
  { echo "## $label"; python3 -m mkbench analyze engine --store "/tmp/tp/$label.sqlite"; } >> "$out/engine.md" 2>&1
done
grep -h "^engine:\|^| judge\|^| candidates\|^| baselines" "$out/engine.md"
tar -czf "$out/throughput.tgz" --exclude='*-cache' -C /tmp tp
