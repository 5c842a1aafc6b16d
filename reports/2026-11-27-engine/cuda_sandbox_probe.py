"""Which layer of mkbench.sandbox keeps a CUDA worker from opening the GPU (device call 7).

    python reports/2026-11-27-engine/cuda_sandbox_probe.py LAYER   # none|reaper|landlock|caps|seccomp|all

Applies one layer in this fresh process, then makes the first CUDA calls a worker makes, and prints
one line: the layer, what it said, and the CUDA result or the exception.
"""
import os
import sys
import tempfile

layer = sys.argv[1]
from mkbench import sandbox  # noqa: E402
from mkbench.store_digest import key_dir  # noqa: E402

scratch = tempfile.mkdtemp(prefix="probe-")
said = ""
try:
    if layer == "reaper":
        said = sandbox._reaper(scratch)
    elif layer == "landlock":
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS, as confine() does
        said = sandbox._landlock([scratch], None, os.path.realpath(key_dir()))
    elif layer == "caps":
        said = sandbox._drop_capabilities()
    elif layer == "seccomp":
        said = sandbox._seccomp()
    elif layer == "all":
        said = sandbox.confine({}, None)
    import torch
    n = torch.cuda.device_count()
    x = torch.ones(4, device="cuda") * 2
    print(f"{layer}: {said!r}: {n} GPU(s), {x.sum().item()}", flush=True)
except BaseException as exc:  # noqa: BLE001 - the point is to see it
    print(f"{layer}: {said!r}: FAILED {type(exc).__name__}: {str(exc)[:300]}", flush=True)
