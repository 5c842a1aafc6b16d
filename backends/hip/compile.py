"""Building HIP candidates without running them: the gating NVIDIA-mapping compile with nvcc, and
hipcc for AMD targets (side checks, stored apart from the verdict)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from mkbench.backends.native import nvcc, sources

from . import loader

AMD_TARGETS = ("gfx90a", "gfx940", "gfx942")  # MI200; MI300 (gfx940 is the early MI300 id, gfx942 MI300X/A)
HIPCC_TIMEOUT_S = 300


def find_hipcc() -> str | None:
    return shutil.which("hipcc") or (str(Path("/opt/rocm/bin/hipcc")) if Path("/opt/rocm/bin/hipcc").is_file()
                                     else None)


def hip_sources(path: Path) -> sources.Found:
    return sources.find(path, "hip")


def _origin(src: sources.Source, path: Path) -> tuple[str, int] | None:
    return (Path(path).as_posix(), src.line) if src.exact else None


def nvcc_check(path: Path, arch: str) -> None:
    """Compile every HIP source of the candidate as the NVIDIA loader would (hip_on_cuda.h + the
    source), with nvcc for ``arch``. Raises CompileError with nvcc's message."""
    from mkbench.errors import CompileError
    found = hip_sources(path)
    if not found.sources:
        raise CompileError(f"{path}: no HIP source found statically "
                           f"({'; '.join(found.unresolved) or 'no HIP_SOURCE string'})")
    failure = nvcc.first_failure(((src, loader.nvidia_text(src.text, _origin(src, path)), nvcc.NVRTC_FLAGS)
                                  for src in found.sources), arch)
    if failure is not None:
        src, message = failure
        raise CompileError(f"nvcc -arch={arch} (HIP through hip_on_cuda.h): {src.label}:\n{message}")


def hipcc_checks(path: Path) -> dict[str, dict]:
    """``{"hipcc --offload-arch=gfxNNN": {"ok", "message"}}`` for each AMD target; a target this
    hipcc does not know is recorded as not checked."""
    hipcc = find_hipcc()
    if hipcc is None:
        return {}
    found = hip_sources(path)
    out: dict[str, dict] = {}
    for target in AMD_TARGETS:
        key = f"hipcc --offload-arch={target}"
        if not found.sources:
            out[key] = {"ok": False, "message": "no HIP source found statically"}
            continue
        messages, ok = [], True
        for src in found.sources:
            text = "#include <hip/hip_runtime.h>\n" + loader.amd_text(src.text, _origin(src, path))
            good, message = _hipcc(hipcc, text, target)
            if "invalid target ID" in message or "unknown target" in message.lower():
                ok, messages = False, [f"not checked: {target} is not known to this hipcc ({_hipcc_version(hipcc)})"]
                break
            ok &= good
            if not good:
                messages.append(f"{src.label}:\n{message}")
        out[key] = {"ok": ok, "message": "\n".join(messages)}
    return out


def _hipcc(hipcc: str, text: str, target: str) -> tuple[bool, str]:
    env = dict(os.environ, HIP_PLATFORM="amd")
    with tempfile.TemporaryDirectory(prefix="mkbench-hipcc-") as tmp:
        src = Path(tmp, "candidate.hip")
        src.write_text(text)
        cmd = [hipcc, f"--offload-arch={target}", "--cuda-device-only", "-c", "-w", "-std=c++17", str(src),
               "-o", str(Path(tmp, "candidate.o"))]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=HIPCC_TIMEOUT_S, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            return False, f"hipcc did not finish within {HIPCC_TIMEOUT_S} s"
        return proc.returncode == 0, (proc.stdout + proc.stderr).replace(str(src), "candidate.hip").strip()


_versions: dict[str, str] = {}


def _hipcc_version(hipcc: str) -> str:
    if hipcc not in _versions:
        try:
            out = subprocess.run([hipcc, "--version"], capture_output=True, text=True, timeout=60).stdout
            _versions[hipcc] = next((line.strip() for line in out.splitlines() if "HIP version" in line),
                                    "unknown version")
        except (OSError, subprocess.TimeoutExpired):
            _versions[hipcc] = "unknown version"
    return _versions[hipcc]


__all__ = ["AMD_TARGETS", "find_hipcc", "hip_sources", "hipcc_checks", "nvcc_check"]
