#!/usr/bin/env bash
# Device call 8: do the 3 GPU isolation tests that fail on this tree (call 7) fail on the previous
# main (2259e45) too? The previous main's package (.bench/prev) and tests (.bench/prevtests), same call.
set -uo pipefail
export PYTHONUNBUFFERED=1
out=${OUT:-results}
mkdir -p "$out"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/device8.txt" 2>&1
python3 -c "import sys; sys.path.insert(0, 'benchmarks'); from pathlib import Path; from throughput import layout; layout(Path('.bench/prev'), Path('/tmp/prevpkg'))"
sel="test_crash_and_hang_cost_only_their_own_verdict or test_mutation_and_invalid_files or test_illegal_address_is_isolated"
(cd .bench/prevtests && PYTHONPATH=/tmp/prevpkg timeout 280 python3 -m pytest -q -p no:cacheprovider tests/test_isolation.py \
  -k "$sel" --basetemp=/tmp/previso 2>&1 | tail -25) > "$out/isolation-previous-main.log"
python3 -c "import sys; sys.path.insert(0, '/tmp/prevpkg'); import mkbench; print(mkbench.__file__)" >> "$out/isolation-previous-main.log"
