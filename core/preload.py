"""Work every forked child would otherwise repeat, done once in the fork server before any fork
(:mod:`mkbench.engine.procs` imports this module there, after torch and Triton).

Measured with py-spy over 30 tasks of the main job on an H200 (``reports/2026-11-27-cpu-profile``):
of 976 CPU seconds in Python, 523 went to importing ``torch._dynamo``, ``torch._inductor`` and sympy,
once in every worker. A lane worker's profiler start (``torch.profiler`` reads inductor's config)
and a compile-ahead worker's meta draws (``normal_`` on ``meta`` runs a Python decomposition that
imports dynamo) each paid about 9 s of a core for it; the lanes wait through the first, and the
second is most of a reference's compile ahead. Triton's ``triton_key`` (a hash of its own sources,
kept per process) took another 0.6 s per worker. None of this starts a thread or touches a device,
so it is safe to do before the server forks.
"""

from __future__ import annotations

import torch._inductor  # noqa: F401 - pulls in torch._dynamo, torch.fx's symbolic shapes, sympy

try:
    from triton.runtime.cache import triton_key
except ImportError:  # pragma: no cover - a Triton without it computes nothing here
    triton_key = None

if triton_key is not None:
    triton_key()  # cached per process: every fork inherits the value
