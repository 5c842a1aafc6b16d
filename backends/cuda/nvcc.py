"""Compiling device code with nvcc where no GPU is present (compile-only mode), and the flags that
make a ``load_inline`` source compile outside torch's own build."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_ARCH = "sm_90"  # H100/H200, the GPUs mkbench is calibrated on
# nvcc parses torch's headers for a load_inline source in about a minute of CPU time.
TIMEOUT_S = 600
# NVRTC (what CuPy uses at run time) defaults to C++17; nvcc is told the same.
NVRTC_FLAGS = ("-std=c++17",)


def find_nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and Path(root, "bin", "nvcc").is_file():
            return str(Path(root, "bin", "nvcc"))
    default = Path("/usr/local/cuda/bin/nvcc")
    return str(default) if default.is_file() else None


def arch_for(hw) -> str:
    """The sm_XX named in an NVIDIA profile's architecture ("hopper (sm_90)"), else sm_90."""
    m = re.search(r"\bsm_\d+[a-z]?\b", getattr(hw, "architecture", "") or "")
    return m.group(0) if m and getattr(hw, "vendor", "") == "nvidia" else DEFAULT_ARCH


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


def compile_device(text: str, *, arch: str = DEFAULT_ARCH, flags=NVRTC_FLAGS, nvcc: str | None = None,
                   timeout: float = TIMEOUT_S) -> tuple[bool, str]:
    """Compile ``text`` as one CUDA translation unit to a cubin for ``arch`` (device code only:
    host functions are parsed by nvcc's front end but not built). Returns (ok, compiler output);
    messages name the candidate's file and line where the text carries a ``#line`` directive."""
    nvcc = nvcc or find_nvcc()
    if nvcc is None:
        return False, "nvcc not found (PATH, CUDA_HOME, /usr/local/cuda)"
    with tempfile.TemporaryDirectory(prefix="mkbench-nvcc-") as tmp:
        src = Path(tmp, "candidate.cu")
        src.write_text(text)
        cmd = [nvcc, f"-arch={arch}", "-cubin", "-w", "-o", str(Path(tmp, "candidate.cubin")), str(src), *flags]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            return False, f"nvcc did not finish within {timeout:.0f} s"
        out = (proc.stdout + proc.stderr).replace(str(src), "candidate.cu").strip()
        return proc.returncode == 0, out


__all__ = ["DEFAULT_ARCH", "arch_for", "compile_device", "find_nvcc", "torch_extension_flags"]
