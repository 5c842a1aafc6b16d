#!/usr/bin/env bash
# Call 4 of the portability matrix (2026-11-28, fourth session), one GPU (an H200, as calls 2-3 and the
# Triton store ../2026-11-28-main-job-1gpu): SYCL's 60 references under the timer rule fixed in 6cc78d6
# (call 2's SYCL rows were called `hack` by the old one; 28 tasks never ran), after the CUDA and HIP `hypot`
# references as mended this session. Each into a store of its own in $OUT; the matrix is built from the
# returned stores here (README: Commands). Carry .whl (pyopencl: ../../shared/device/README.md).
#   bash reports/2026-11-27-portability/call4.sh
# SYCL's rest in a later call (its store signed on the machine that wrote it: adopted), without the hypot runs:
#   SYCL_STORE=reports/2026-11-27-portability/call4/sycl.sqlite HYPOT=0 TRITON_TASKS=w8a8_matmul DEADLINE=500 \
#     bash reports/2026-11-27-portability/call4.sh
# Call 6 (2026-11-28, sixth session; run as part 2 of ../2026-11-28-calls/call22.sh), the 16 SYCL tasks call 5 did not reach, and the one it lost to OpenCL's memory:
#   SYCL_STORE=reports/2026-11-27-portability/call5/sycl.sqlite HYPOT=0 SYCL_AGAIN=quantize_int8_per_tensor_asym \
#     DEADLINE=500 bash reports/2026-11-27-portability/call4.sh
# Call 7 (the same session), SYCL's last two tasks (bernoulli_mask, dropout: the run resumes where call 6 stopped):
#   SYCL_STORE=reports/2026-11-27-portability/call6/sycl.sqlite HYPOT=0 DEADLINE=150 bash reports/2026-11-27-portability/call4.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}; mkdir -p "$out"
[ -f .whl/gpu-env.sh ] && source .whl/gpu-env.sh > "$out/gpu-env.txt" 2>&1
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; nproc; } > "$out/device.txt" 2>&1
deadline=$(( $(date +%s) + ${DEADLINE:-540} ))
[ -n "${SYCL_STORE:-}" ] && cp "$SYCL_STORE" "$out/sycl.sqlite"
run() {  # backend store [mkbench run args...]
  local b=$1 store=$2; shift 2
  local left=$(( deadline - $(date +%s) ))
  [ "$left" -lt 20 ] && { echo "$b: not run, the deadline was reached" | tee -a "$out/$b.log"; return; }
  local start; start=$(date +%s)
  timeout -s TERM "$left" python3 -m mkbench run --backend "$b" --hw auto --baselines eager --time-role large \
    --gpus all --store "$out/$store" --resume --no-progress "$@" >> "$out/$b.log" 2>&1
  echo "$b: exit $?, $(( $(date +%s) - start )) s" | tee -a "$out/$b.log"
}
if [ "${HYPOT:-1}" != 0 ]; then
  run cuda hypot.sqlite --task hypot
  run hip hypot.sqlite --task hypot
fi
# TRITON_TASKS=w8a8_matmul: Triton references to run again (w8a8_matmul's false hack, fixed in c8d413c)
[ -n "${TRITON_TASKS:-}" ] && run triton triton.sqlite --task "$TRITON_TASKS"
# SYCL_AGAIN=task,...: SYCL units to run again into a store of their own (the last store given wins for a
# (task, backend) in the matrix): quantize_int8_per_tensor_asym's upload ran out of OpenCL memory beside 11
# lanes in call 5, read as an error before ae6a54d
[ -n "${SYCL_AGAIN:-}" ] && run sycl sycl-again.sqlite --task "$SYCL_AGAIN"
run sycl sycl.sqlite ${SYCL_STORE:+--adopt-store}
rm -rf "$out"/*-cache
for s in hypot triton sycl sycl-again; do [ -f "$out/$s.sqlite" ] && python3 -c "import sqlite3; sqlite3.connect('$out/$s.sqlite').execute('PRAGMA wal_checkpoint(TRUNCATE)')"; done
tar -czf "$out/unit-logs.tgz" -C "$out" $(cd "$out" && ls -d ./*-logs 2>/dev/null) 2>/dev/null && rm -rf "$out"/*-logs
grep -h "^engine:\|exit" "$out"/*.log
