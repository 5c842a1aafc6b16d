#!/usr/bin/env bash
# Call 32 (not run yet: written in the eighth session, with no device time left; one H200; carry .bench/kbx): issue 28,
# a timing phase that defers for long checks and is given back when a check it drains for turns long
# (--timing-defer S; off by default), this tree's default against --timing-defer 30, on the KernelBench-X corpus
# (kbx-corpus.sh's run), LIMIT s each. Call 31 measured the first form (no give-back): it deferred 0.4 s in all.
#   LIMIT=200 bash reports/2026-11-28-calls/call32.sh
VARIANT="defer=--timing-defer 30" LIMIT="${LIMIT:-200}" exec bash "$(dirname "$0")/kbx-corpus.sh"
