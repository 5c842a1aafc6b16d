"""A child for the fork server's tests: reports what it found already imported and computed when
it started, before it imported anything itself."""

import sys

from mkbench import wire


def report(conn) -> None:
    key = None
    if "triton.runtime.cache" in sys.modules:
        key = sys.modules["triton.runtime.cache"].triton_key.cache_info().currsize
    wire.send(conn, {"modules": sorted(m for m in ("torch._dynamo", "torch._inductor", "sympy") if m in sys.modules),
                     "triton_key_cached": key})
