#!/usr/bin/env bash
# Issue 28, one device call: (1) the GPU tests of the run-ahead and --untimed-wait changes; (2) the
# previous main (PREV, a `git archive` of it) and this tree, one after the other, on the main job's
# settings for the linear_algebra tasks (host-bound eager calls: where the run-ahead's doublings cost
# most); (3) a slice of the README main job by this tree, for the CPU seconds by role.
#   call 1: TREE=<commit> PREV=.bench/prev bash reports/2026-11-27-run-ahead/run.sh
#   call 2: TREE=<commit> PREV=.bench/prev AB_LIMIT=240 SLICE=0 \
#           AB_SELECT="--task qr_householder,tridiagonal_solve,..." bash reports/2026-11-27-run-ahead/run.sh
#   call 3: TREE=<commit> PREV=.bench/prev AB_LIMIT=225 SLICE=0 AB_SELECT=" " bash reports/2026-11-27-run-ahead/run.sh
#           (AB_SELECT blank: the whole README main job, each tree stopped at AB_LIMIT s)
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" results
echo "tree ${TREE:-unknown}; previous main $(cat "${PREV}/COMMIT" 2>/dev/null)" > "$out/tree.txt"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
py=$(bash .ci/setup 2>"$out/setup.log" | tail -1)
timeout 120 $py -m pytest -q -m gpu tests/test_timing.py tests/test_untimed_wait.py > "$out/gpu-tests.log" 2>&1
tail -2 "$out/gpu-tests.log"
timeout $((2 * ${AB_LIMIT:-150} + 60)) $py benchmarks/throughput.py --previous "$PREV" --out "$out/ab" --limit "${AB_LIMIT:-150}" -- \
  --hw auto --baselines eager --time-role large ${AB_SELECT:---category linear_algebra} > "$out/ab.log" 2>&1
tail -30 "$out/ab.log"
if [ "${SLICE:-200}" != 0 ]; then
start=$(date +%s.%N)
timeout -s TERM "${SLICE:-200}" bash .ci/main > "$out/main-job.log" 2>&1
echo "exit $?, wall $(python3 -c "print(round($(date +%s.%N)-$start,1))") s (setup included)" >> "$out/main-job.log"
$py -m mkbench analyze engine --store results/mkbench.sqlite > "$out/engine.md" 2>&1
cp results/mkbench.sqlite "$out/main-job-slice.sqlite" 2>/dev/null
tail -3 "$out/main-job.log"; head -3 "$out/engine.md"
fi
# the summary apart, and the stores and logs without the compile caches (call 3's archive, caches
# included, was too large to come back, and its summary with it)
cp "$out/ab/summary.json" "$out/ab-summary.json" 2>/dev/null
cd "$out" && tar czf ab.tgz --exclude='*-cache' ab && rm -rf ab
