#!/usr/bin/env bash
# Call 26 (one H200; carry .bench/x4/tasks .bench/x4/sol-h20 .bench/x4/sol/default .bench/cl1-start):
# 1. the GPU tests of a lazily built load_inline kernel under both build holds (release, now the default, stops
#    the stepped-out worker while a timing phase is open);
# 2. kb_l2_49 (a CUDA-L1 candidate using torch.compile) alone: Inductor now compiles in the worker;
# 3. issue 30: the h100 set's default variant, the 100 tasks not yet run on the H200 (h200-rest.txt), into call 2's
#    H200 store (../2026-11-28-cuda-l1/call2-h200/cudal1.sqlite, copied to .bench/cl1-start with run_x4b.sh and
#    h200-rest.txt, since that folder is too large to travel), to the call's end.
#   bash reports/2026-11-28-calls/call26.sh     (files: lazy-tests.log, kb_l2_49.{log,txt}, h100-rest/{device.txt,cudal1.sqlite,runs.log,unit-logs.tgz}: a call returns 8)
set -uo pipefail
export PYTHONUNBUFFERED=1
began=$(date +%s)
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_backend_cuda.py -k first_forward \
  --basetemp=/tmp/lazy-tests > "$out/lazy-tests.log" 2>&1
echo "exit $?" >> "$out/lazy-tests.log"
timeout 120 python3 -m mkbench run --backend cuda --hw auto --tasks-dir .bench/x4/tasks --solutions .bench/x4/sol-h20 \
  --method cuda-l1-h20 --task kb_l2_49 --baselines eager --time-role large --store /tmp/kb49/kb49.sqlite \
  --json /tmp/kb49/kb49.json --no-progress > /tmp/kb49.log 2>&1
echo "exit $?" >> /tmp/kb49.log
cp /tmp/kb49.log "$out/kb_l2_49.log"
python3 - > "$out/kb_l2_49.txt" 2>&1 <<'PY'
import json
for r in json.load(open("/tmp/kb49/kb49.json"))["results"]:
    print(r["method"], r["shape"], r["dtype"], r["verdict"], (r.get("error") or "")[:300].replace("\n", " "))
PY
left=$(( 585 - ($(date +%s) - began) ))
mkdir -p "$out/h100-rest"
OUT="$out/h100-rest" STORE=.bench/cl1-start/cudal1.sqlite ADOPT=1 RUNS=sol/default:cuda-l1-h100 \
  TASKS=$(paste -sd, .bench/cl1-start/h200-rest.txt) SHUFFLE=7 DEADLINE=$left bash .bench/cl1-start/run_x4b.sh
