"""The loader HIP candidates use: ``load_module(HIP_SOURCE).get_function(name)(grid, block, args,
shared_mem=0)``.

* ``grid`` and ``block``: an int or a tuple of up to three ints.
* ``args``: a tuple, one entry per kernel parameter: torch tensors on the GPU (passed as device
  pointers), numpy scalars (passed at their width: ``np.int32(n)`` for an ``int``,
  ``np.float32(x)`` for a ``float``), Python ints (passed as 64-bit ``long long``), Python floats
  (``double``) and bools (``bool``), as CuPy does.
* the launch goes to torch's current stream, so CUDA-event timing sees it.

On NVIDIA GPUs the source is compiled with NVRTC (through CuPy) after ``hip_on_cuda.h``, the
backend's mapping of HIP's device-side names onto CUDA; the candidate's own ``#include <hip/...>``
lines are blanked (line numbers are kept). On AMD GPUs (a ROCm build of torch) it is compiled with
hiprtc for the device's gfx target and launched with hipModuleLaunchKernel through ctypes.
Modules are built once per process for each (source, options).
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path
from typing import Any, Sequence

from mkbench.backends.native.launches import count_launch

HEADER = Path(__file__).with_name("hip_on_cuda.h")
_HIP_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]hip/[^>"]*[>"][^\n]*$', re.M)
_MODULES: dict[tuple[str, tuple[str, ...]], "HipModule"] = {}


class HipCompileError(RuntimeError):
    """NVRTC or hiprtc rejected the source; the message is the compiler's log."""


def on_amd() -> bool:
    import torch
    return bool(getattr(torch.version, "hip", None))


def nvidia_text(source: str, origin: tuple[str, int] | None = None) -> str:
    """The text compiled on NVIDIA: the mapping header, then the source with its HIP includes
    blanked, under a #line naming the candidate file (or "HIP_SOURCE")."""
    path, line = origin or ("HIP_SOURCE", 1)
    return (f'#line 1 "{HEADER.name}"\n{HEADER.read_text()}\n'
            f'#line {line} "{path}"\n{_HIP_INCLUDE.sub("", source)}')


def amd_text(source: str, origin: tuple[str, int] | None = None) -> str:
    path, line = origin or ("HIP_SOURCE", 1)
    return f'#line {line} "{path}"\n{source}'


def load_module(source: str, options: Sequence[str] = (), *, origin: tuple[str, int] | None = None) -> "HipModule":
    """Compile ``source`` (HIP C++ device code with ``extern "C" __global__`` kernels), once per
    process for each (source, options). Raises HipCompileError with the compiler's log.
    ``origin`` = (file, line of the source's first line) makes messages name the candidate file."""
    key = (source, tuple(options))
    module = _MODULES.get(key)
    if module is None:
        module = _MODULES[key] = HipModule(source, tuple(options), origin)
    return module


class HipModule:
    def __init__(self, source: str, options: tuple[str, ...], origin):
        self._impl = _AmdModule(source, options, origin) if on_amd() else _NvidiaModule(source, options, origin)
        self._functions: dict[str, HipFunction] = {}

    def get_function(self, name: str) -> "HipFunction":
        fn = self._functions.get(name)
        if fn is None:
            fn = self._functions[name] = HipFunction(name, self._impl.launcher(name))
        return fn


class HipFunction:
    def __init__(self, name: str, launch):
        self.name, self._launch = name, launch

    def __call__(self, grid, block, args: Sequence[Any], shared_mem: int = 0) -> None:
        count_launch()
        self._launch(_dims(grid), _dims(block), tuple(args), int(shared_mem))


def _dims(d) -> tuple[int, int, int]:
    d = (d,) if isinstance(d, int) else tuple(int(v) for v in d)
    if not 1 <= len(d) <= 3:
        raise ValueError(f"grid/block must have 1 to 3 dimensions, got {d}")
    return (d + (1, 1))[:3]


def _device_pointer(t) -> int:
    if not t.is_cuda:
        raise TypeError(f"a {t.device} tensor was passed to a HIP kernel; tensors must be on the GPU")
    return t.data_ptr()


# --- NVIDIA: NVRTC through CuPy ------------------------------------------------------------------
class _NvidiaModule:
    def __init__(self, source, options, origin):
        import cupy

        from mkbench.backends.native.nvrtc import is_compile_error
        self._module = cupy.RawModule(code=nvidia_text(source, origin), options=("--std=c++17", *options))
        try:
            self._module.compile()
        except Exception as exc:
            if is_compile_error(exc):
                raise HipCompileError(str(exc)) from None
            raise

    def launcher(self, name):
        import torch

        from mkbench.backends.native.nvrtc import torch_stream
        kernel = self._module.get_function(name)

        def launch(grid, block, args, shared_mem):
            converted = tuple(_device_pointer(a) if isinstance(a, torch.Tensor) else a for a in args)
            kernel(grid, block, converted, shared_mem=shared_mem, stream=torch_stream())
        return launch


# --- AMD: hiprtc + hipModuleLaunchKernel through ctypes (ROCm builds of torch ship both libraries)
_CTYPES = {"int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
           "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
           "float32": ctypes.c_float, "float64": ctypes.c_double, "bool": ctypes.c_bool}
_amd_libs: tuple | None = None


def amd_libraries() -> tuple:
    """(hiprtc, amdhip64) as ctypes libraries, from torch/lib, the loader path or /opt/rocm."""
    global _amd_libs
    if _amd_libs is None:
        import ctypes.util
        import os

        import torch
        roots = [Path(torch.__file__).parent / "lib", Path(os.environ.get("ROCM_PATH", "/opt/rocm")) / "lib"]

        def first(names):
            for name in names:
                for root in roots:
                    for path in sorted(root.glob(name + "*")):
                        try:
                            return ctypes.CDLL(str(path))
                        except OSError:
                            continue
                found = ctypes.util.find_library(name.removeprefix("lib").removesuffix(".so"))
                if found:
                    return ctypes.CDLL(found)
            raise OSError(f"none of {names} found in {', '.join(map(str, roots))} or on the loader path")
        hip = first(["libamdhip64.so"])
        try:
            rtc = first(["libhiprtc.so"])
        except OSError:  # older ROCm: hiprtc lives inside libamdhip64
            rtc = hip
        _amd_libs = (rtc, hip)
    return _amd_libs


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{what} failed with HIP error {rc}")


class _AmdModule:
    def __init__(self, source, options, origin):
        import torch
        rtc, hip = amd_libraries()
        torch.cuda.current_device()  # torch has made the device's primary context current
        arch = torch.cuda.get_device_properties(torch.cuda.current_device()).gcnArchName
        prog = ctypes.c_void_p()
        _check(rtc.hiprtcCreateProgram(ctypes.byref(prog), amd_text(source, origin).encode(), b"HIP_SOURCE", 0, None,
                                       None),
               "hiprtcCreateProgram")
        opts = [f"--offload-arch={arch}".encode(), b"-std=c++17", *(o.encode() for o in options)]
        rc = rtc.hiprtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        if rc != 0:
            size = ctypes.c_size_t()
            rtc.hiprtcGetProgramLogSize(prog, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value + 1)
            rtc.hiprtcGetProgramLog(prog, log)
            rtc.hiprtcDestroyProgram(ctypes.byref(prog))
            raise HipCompileError(log.value.decode(errors="replace"))
        size = ctypes.c_size_t()
        _check(rtc.hiprtcGetCodeSize(prog, ctypes.byref(size)), "hiprtcGetCodeSize")
        code = ctypes.create_string_buffer(size.value)
        _check(rtc.hiprtcGetCode(prog, code), "hiprtcGetCode")
        rtc.hiprtcDestroyProgram(ctypes.byref(prog))
        self._code = code  # hipModuleLoadData may keep pointing into it
        self._module = ctypes.c_void_p()
        _check(hip.hipModuleLoadData(ctypes.byref(self._module), code), "hipModuleLoadData")
        self._hip = hip

    def launcher(self, name):
        import torch
        fn = ctypes.c_void_p()
        _check(self._hip.hipModuleGetFunction(ctypes.byref(fn), self._module, name.encode()),
               f"hipModuleGetFunction({name})")
        hip = self._hip

        def launch(grid, block, args, shared_mem):
            held = [_amd_arg(a, torch) for a in args]
            params = (ctypes.c_void_p * max(len(held), 1))(*[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p)
                                                             for h in held])
            stream = ctypes.c_void_p(int(torch.cuda.current_stream().cuda_stream))
            _check(hip.hipModuleLaunchKernel(fn, *grid, *block, ctypes.c_uint(shared_mem), stream, params, None),
                   f"hipModuleLaunchKernel({name})")
        return launch


def _amd_arg(a, torch):
    if isinstance(a, torch.Tensor):
        return ctypes.c_void_p(_device_pointer(a))
    if isinstance(a, bool):
        return ctypes.c_bool(a)
    if isinstance(a, int):
        return ctypes.c_int64(a)
    if isinstance(a, float):
        return ctypes.c_double(a)
    dtype = getattr(getattr(a, "dtype", None), "name", None)
    if dtype in _CTYPES:
        return _CTYPES[dtype](a.item())
    raise TypeError(f"unsupported HIP kernel argument {type(a).__name__}")


__all__ = ["HipCompileError", "HipFunction", "HipModule", "amd_text", "load_module", "nvidia_text"]
