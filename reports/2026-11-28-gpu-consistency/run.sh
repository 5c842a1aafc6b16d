#!/usr/bin/env bash
# GPU consistency (issue 28): does the same candidate time the same on every GPU of one host? On a 4-GPU
# host, 12 Triton reference tasks of different kinds (elementwise silu, gelu; reductions sum_lastdim,
# var_lastdim; matmul, bmm; conv2d_3x3, depthwise_conv2d; layer_norm, rms_norm; attention sdpa_causal,
# attention_alibi), their large shapes timed against eager (measured again, --no-baseline-cache), run once
# per GPU by benchmarks/gpu_consistency.py into a store per GPU. It reports, per (task, method, shape,
# dtype) row correct and timed on two GPUs or more, the spread max/min - 1 of the median times across
# the GPUs: median, p95, and the share within 3% (the bar), per method (reference, eager).
# Why: a multi-GPU run (--gpus all) times each unit on whichever GPU is free, so a speedup is only
# comparable across rows if the GPUs of a host time alike; a slow card (clocks, thermals, a neighbour's
# PCIe/NVLink traffic) would show as a spread here.
# Pass 1, concurrent: all four GPUs at once, as in a real run (host CPU and memory shared), each stopped
# past LIMIT s (default 240). Pass 2, sequential: one GPU at a time on an otherwise idle host, each run
# stopped past SEQ_LIMIT s (default: what is left of BUDGET s of the device call over the GPUs; skipped
# where that is under 60 s). PASS=concurrent|sequential|both (default both). Both do not fit one 10-minute
# call at LIMIT=240: the sequential pass then gets its own call (PASS=sequential: about 100 s per GPU).
# nvidia-smi clocks, temperatures and throttle reasons are recorded before and after each pass.
# Call 35 ran the concurrent pass on 4 H200s (reports/2026-11-28-calls/call35-h200x4); the sequential pass is not run yet.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . > /dev/null 2>&1
{ nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id,clocks.max.sm,memory.total --format=csv; nproc
  nvidia-smi topo -m; } > "$out/device.txt" 2>&1
tasks=silu,gelu,sum_lastdim,var_lastdim,matmul,bmm,conv2d_3x3,depthwise_conv2d,layer_norm,rms_norm,sdpa_causal
tasks=$tasks,attention_alibi
args=(--task "$tasks" --backend triton --hw auto --baselines eager --time-role large --shape-role large)
clocks() { nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,temperature.gpu,power.draw,clocks_throttle_reasons.active \
  --format=csv >> "$out/clocks.txt" 2>&1; }
start=$SECONDS
pass=${PASS:-both}
if [ "$pass" != sequential ]; then
  clocks
  python3 benchmarks/gpu_consistency.py --out "$out/concurrent" --gpus all --concurrent --limit "${LIMIT:-240}" \
    -- "${args[@]}" > "$out/concurrent.md" 2>&1
  echo "concurrent: exit $?, $((SECONDS - start)) s" | tee -a "$out/concurrent.md"
  clocks
fi
if [ "$pass" != concurrent ]; then
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
  # each run may take its limit plus 30 s to stop, plus its start
  seq=${SEQ_LIMIT:-$(( (${BUDGET:-570} - (SECONDS - start)) / (gpus > 0 ? gpus : 1) - 40 ))}
  if [ "$seq" -ge 60 ]; then
    python3 benchmarks/gpu_consistency.py --out "$out/sequential" --gpus all --sequential --limit "$seq" \
      -- "${args[@]}" > "$out/sequential.md" 2>&1
    echo "sequential ($seq s per GPU): exit $?, $((SECONDS - start)) s" | tee -a "$out/sequential.md"
    clocks
  else
    echo "sequential pass skipped: $seq s per GPU left (set PASS=sequential, or SEQ_LIMIT)" | tee "$out/sequential.md"
  fi
fi
rm -rf "$out"/*/gpu*-cache
# a call brings back at most 8 files from $OUT (call 35 lost GPU 3's store and both summaries): one archive
# per pass, its summary beside it
for d in concurrent sequential; do
  [ -d "$out/$d" ] || continue
  cp "$out/$d/summary.json" "$out/$d-summary.json" 2>/dev/null
  tar -czf "$out/$d.tgz" -C "$out" "$d" && rm -rf "${out:?}/$d"
done
cat "$out"/concurrent.md "$out"/sequential.md 2>/dev/null | head -60
