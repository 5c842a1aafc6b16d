"""What the CUDA backend and the HIP backend on NVIDIA share at run time: NVRTC through CuPy.
Kernels launch on torch's current stream (as a CuPy stream), and CuPy's NVRTC failures are
recognised as compile errors. Nothing here runs without an NVIDIA GPU."""

from __future__ import annotations

import sys
from typing import Any

_STREAMS: dict[int, Any] = {}


def torch_stream():
    """torch's current stream as a CuPy stream: ``with torch_stream():`` (or ``stream=``) makes
    CuPy launch there, so CUDA-event timing (and graph capture) sees the candidate's kernels."""
    import warnings

    import cupy
    import torch
    ptr = int(torch.cuda.current_stream().cuda_stream)
    stream = _STREAMS.get(ptr)
    if stream is None:
        # Kept for the life of the worker. ExternalStream never destroys the handle (CuPy 14
        # deprecates it for Stream.from_external, whose Stream would destroy torch's stream when
        # collected), so it is used while it exists.
        if hasattr(cupy.cuda, "ExternalStream"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                stream = cupy.cuda.ExternalStream(ptr)
        else:  # pragma: no cover - a future CuPy
            stream = cupy.cuda.Stream.from_external(torch.cuda.current_stream())
        _STREAMS[ptr] = stream
    return stream


def is_compile_error(exc: BaseException) -> bool:
    """Whether ``exc`` is CuPy's NVRTC ``CompileException``."""
    mod = sys.modules.get("cupy.cuda.compiler")
    return mod is not None and isinstance(exc, getattr(mod, "CompileException", ()))


__all__ = ["is_compile_error", "torch_stream"]
