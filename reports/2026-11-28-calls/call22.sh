#!/usr/bin/env bash
# Call 22 (2026-11-28, sixth session), one H200, two parts in one call (carry .bench/prev-main .bench/x4/tasks
# .bench/x4/sol-h20 .whl):
#  1. the CUDA compile-ahead A/B again (reports/2026-11-28-cuda-compile-ahead/run.sh), the compile-only call now on
#     fake CUDA tensors (call 21 gave it meta tensors: CUDA-L1's candidates check x.is_cuda before they build);
#  2. the portability matrix's SYCL rest, in what is left of DEADLINE (reports/2026-11-27-portability/call4.sh).
# At most 8 files come back from a call: the parts' folders go back as archives, SYCL's stores beside them.
#   DEADLINE=560 LIMIT=200 bash reports/2026-11-28-calls/call22.sh
set -uo pipefail
out=${OUT:-results}; mkdir -p "$out"; out=$(realpath "$out")
began=$(date +%s)
OUT=$out/ab2 LIMIT=${LIMIT:-200} bash reports/2026-11-28-cuda-compile-ahead/run.sh > "$out/ab2.txt" 2>&1
left=$(( ${DEADLINE:-560} - ($(date +%s) - began) ))
echo "SYCL: $left s left" >> "$out/ab2.txt"
OUT=$out/sycl SYCL_STORE=reports/2026-11-27-portability/call5/sycl.sqlite HYPOT=0 \
  SYCL_AGAIN=quantize_int8_per_tensor_asym DEADLINE=$left bash reports/2026-11-27-portability/call4.sh > "$out/sycl.txt" 2>&1
cd "$out" && tar -czf ab2.tgz ab2 && rm -rf ab2
mv sycl/*.sqlite . 2>/dev/null; tar -czf sycl.tgz sycl && rm -rf sycl
ls -la "$out"; tail -n 5 ab2.txt sycl.txt
