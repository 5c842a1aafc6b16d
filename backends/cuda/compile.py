"""Compile-only builds of CUDA candidates (no NVIDIA GPU here): every statically found CUDA source
through nvcc, ``load_inline`` sources with the flags torch's own extension build would use."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

from mkbench.backends.native import nvcc, sources
from mkbench.errors import CompileError

_FLAGS_PROBE = """
import json, sysconfig
from pathlib import Path
import torch
from torch.utils import cpp_extension as ce
std = "-std=c++20" if "'-std=c++20'" in Path(ce.__file__).read_text() else "-std=c++17"
abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", 1))
includes = list(ce.include_paths()) + [sysconfig.get_paths()["include"]]
print(json.dumps([*ce.COMMON_NVCC_FLAGS, std, f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
                  "-DTORCH_EXTENSION_NAME=mkbench_compile_check", "-DTORCH_API_INCLUDE_EXTENSION_H",
                  *(f"-I{p}" for p in includes)]))
"""


@functools.lru_cache(maxsize=1)
def torch_extension_flags() -> tuple[str, ...]:
    """What torch.utils.cpp_extension passes nvcc for a CUDA extension, minus the host build:
    torch's and Python's include folders, the C++ standard of the installed torch and its ABI.
    Read in a child process: importing cpp_extension pulls in setuptools, whose distutils shim
    fails in a process that has already imported the standard library's distutils."""
    proc = subprocess.run([sys.executable, "-c", _FLAGS_PROBE], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"could not read torch's extension flags: {proc.stderr.strip()[-500:]}")
    return tuple(json.loads(proc.stdout.strip().splitlines()[-1]))


def compile_with_nvcc(path: Path, arch: str):
    """Compile-only mode: every statically found CUDA source through nvcc for ``arch``. Raises
    CompileError with nvcc's message (file:line of the candidate where the lines map)."""
    found = sources.find(path, "cuda")
    todo = found.of_kind("nvrtc", "load_inline")
    if not todo:
        why = ("; ".join(found.unresolved)
               or "no RawModule/RawKernel code, load_inline cuda_sources or CUDA_SOURCE string")
        raise CompileError(f"{path}: no CUDA source found statically to compile ({why})")

    def jobs():
        for src in todo:
            flags = torch_extension_flags() if src.kind == "load_inline" else nvcc.NVRTC_FLAGS
            yield src, sources.line_directive(src, path) + src.text, flags
    failure = nvcc.first_failure(jobs(), arch)
    if failure is not None:
        src, message = failure
        where = "" if src.exact else f" [{src.label}; line numbers are relative to that string]"
        raise CompileError(f"nvcc -arch={arch}: {src.label}{where}:\n{message}")
    return _not_runnable


def _not_runnable(*args):
    raise RuntimeError("compile-only: this machine has no NVIDIA GPU")


__all__ = ["compile_with_nvcc", "torch_extension_flags"]
