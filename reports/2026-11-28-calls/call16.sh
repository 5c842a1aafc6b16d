#!/usr/bin/env bash
# Call 16 on ONE GPU (issue 28; written 2026-11-28, third session, not run yet: the device time was spent).
# The memory hold staged (--memory-hold staged): a unit checks its small combinations on a small share of the
# budget and takes its whole share before its first large one, against one hold per unit (the default).
#  1. GPU tests: the adversarial suite with --memory-hold staged (the same verdicts and evidence)
#  2. the README main job's first LIMIT s: --memory-hold unit (the default), then staged
#   LIMIT=150 bash reports/2026-11-28-calls/call16.sh          # no carry needed; about 420 s
MKBENCH_TEST_RUN_ARGS="--memory-hold staged" TESTS=tests/test_adversarial_gpu.py \
  exec bash benchmarks/ab_call.sh staged="--memory-hold staged"
