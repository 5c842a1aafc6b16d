"""Compiling device code with nvcc where no GPU is present (compile-only mode): the CUDA backend's
sources as they are, the HIP backend's through its HIP-on-CUDA mapping. Which text and which flags
each source gets is the backend's business; finding nvcc, the target and running it is here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

from .sources import Source

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


def first_failure(jobs: Iterable[tuple[Source, str, Sequence[str]]], arch: str) -> tuple[Source, str] | None:
    """Compile each (source, text, flags) in turn; the first source nvcc rejects, with nvcc's
    message, or None when every one compiled."""
    for src, text, flags in jobs:
        ok, message = compile_device(text, arch=arch, flags=flags)
        if not ok:
            return src, message
    return None


__all__ = ["DEFAULT_ARCH", "NVRTC_FLAGS", "arch_for", "compile_device", "find_nvcc", "first_failure"]
