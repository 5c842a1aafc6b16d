#!/usr/bin/env bash
# Next (not run yet): the two ways of getting CUDA-L1's lazy load_inline builds out of the device's shared hold, against
# this tree's default, in one device call, on the same 30 h20 tasks (tasks.txt): `--build-hold release` (6d41f63) and
# `--compile-ahead lane` with the model made on the fake CUDA device (bac91b3). Carry .bench/x4/tasks .bench/x4/sol-h20.
#   LIMIT=150 bash reports/2026-11-28-cuda-compile-ahead/run2.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
# first the two settings on a lazily built kernel of mkbench's own tests (each says where the build went)
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_backend_cuda.py -k first_forward \
  --basetemp=/tmp/lazy-tests > "$out/lazy-tests.log" 2>&1
x4=$PWD/.bench/x4
tasks=$(paste -sd, reports/2026-11-28-cuda-compile-ahead/tasks.txt)
python3 benchmarks/throughput.py --previous . --out /tmp/ab3 --limit "${LIMIT:-150}" --order this \
  --variant "release=--build-hold release" --variant "lane=--compile-ahead lane" -- --backend cuda --hw auto \
  --tasks-dir "$x4/tasks" --solutions "$x4/sol-h20" --method cuda-l1-h20 --task "$tasks" --baselines eager \
  --time-role large --gpus all > "$out/ab3.log" 2>&1
cp /tmp/ab3/summary.json "$out/summary.json"
for s in /tmp/ab3/*.sqlite; do python3 -m mkbench analyze engine --store "$s" > "${s%.sqlite}-engine.md" 2>&1; done
rm -rf /tmp/ab3/*-cache
tar -czf "$out/ab3.tgz" --exclude="*-cache" -C /tmp ab3 lazy-tests  # stores, logs, engine tables: one file (a call returns at most 8)
tail -n 30 "$out/ab3.log"
