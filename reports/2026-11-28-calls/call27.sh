#!/usr/bin/env bash
# Call 27 (one H200; carry .bench/x4/tasks .bench/x4/sol-h20): CUDA-L1's kb_l2_49 (h20 set), a candidate using
# torch.compile, alone with eager: Inductor now compiles in the worker (compile_threads 1). On every earlier
# H100 and H200 run its compile subprocess found no GPU backend and the candidate was recorded `error`.
# (Call 26 meant to run it but named a store in a directory that did not exist; `mkbench run` makes it now.)
#   bash reports/2026-11-28-calls/call27.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
timeout 200 python3 -m mkbench run --backend cuda --hw auto --tasks-dir .bench/x4/tasks --solutions .bench/x4/sol-h20 \
  --method cuda-l1-h20 --task kb_l2_49 --baselines eager --time-role large --store "$out/kb49/kb49.sqlite" \
  --json "$out/kb49/kb49.json" --no-progress > "$out/kb_l2_49.log" 2>&1
echo "exit $?" >> "$out/kb_l2_49.log"
rm -rf "$out/kb49/kb49-cache"
tar -czf "$out/kb49-logs.tgz" -C "$out/kb49" kb49-logs 2>/dev/null && rm -rf "$out/kb49/kb49-logs"
python3 - <<'PY' | tee "$out/kb_l2_49.txt"
import json, os
for r in json.load(open(os.path.join(os.environ.get("OUT", "results"), "kb49", "kb49.json")))["results"]:
    print(r["method"], r["shape"], r["dtype"], r["verdict"], (r.get("error") or "")[:300].replace("\n", " "))
PY
