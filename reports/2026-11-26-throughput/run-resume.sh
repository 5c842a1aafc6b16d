#!/usr/bin/env bash
# Fourth device call: the main job of the second call resumed to its end (--resume, its store carried
# in .bench/mainjob/), with a look at where the host's CPU goes while it runs: `top` and a py-spy
# profile of the orchestrator (py-spy carried as a wheel in .whl/).
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out" results
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > "$out/device.txt" 2>&1
nproc >> "$out/device.txt"
cp .bench/mainjob/mkbench.sqlite results/mkbench.sqlite
start=$SECONDS
timeout -k 15 "${MAIN_SECONDS:-450}" bash .ci/main --resume > "$out/main-job-resume.log" 2>&1 &
job=$!
sleep 120
pid=$(pgrep -f "mkbench run --backend triton" | head -1)
top -b -n 1 -w 200 | head -40 > "$out/top.txt"
/tmp/site/bin/py-spy record --pid "$pid" --duration 30 --rate 50 --format raw --nonblocking -o "$out/orchestrator.txt" \
  > "$out/py-spy.log" 2>&1
/tmp/site/bin/py-spy dump --pid "$pid" > "$out/orchestrator-dump.txt" 2>&1
wait $job
echo "main job resumed: exit $?, $((SECONDS - start)) s" | tee -a "$out/main-job-resume.log"
python3 -m mkbench analyze engine --store results/mkbench.sqlite > "$out/main-job-engine.md" 2>&1
cp results/mkbench.sqlite "$out/main-job.sqlite"
cp results/latest.md "$out/" 2>/dev/null
tail -8 "$out/main-job-resume.log"; head -8 "$out/main-job-engine.md"; head -20 "$out/top.txt"
