"""What a run records about where it ran. Machine facts (stable) are kept apart from the run's
environment (versions, clocks seen, git revision), as asv does."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import platform
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

PACKAGES = ("mkbench", "torch", "triton", "jax", "jaxlib", "cupy-cuda13x", "cupy-cuda12x", "pyopencl", "numpy",
            "pluggy")


def _cmd(args: list[str], timeout: float = 10) -> str | None:
    if shutil.which(args[0]) is None:
        return None
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_state() -> list[dict[str, str]]:
    """Clocks, temperature and power as nvidia-smi reports them now (empty without NVIDIA)."""
    fields = "name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,memory.total"
    out = _cmd(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"])
    if not out:
        return []
    keys = fields.split(",")
    return [dict(zip(keys, (v.strip() for v in line.split(",")))) for line in out.splitlines()]


def machine_info(probe: dict[str, Any]) -> dict[str, Any]:
    gpus = gpu_state()
    return {
        "hostname": socket.gethostname(),
        "cpu": _cpu_model(),
        "os": platform.platform(),
        "device_name": probe.get("device_name", "cpu"),
        "device_count": probe.get("device_count", 0),
        "compute_capability": probe.get("compute_capability"),
        "multiprocessors": probe.get("multiprocessors"),
        "l2_cache_bytes": probe.get("l2_cache_bytes"),
        "memory_gb": probe.get("memory_gb"),
        "driver": gpus[0]["driver_version"] if gpus else None,
    }


def git_revision() -> str | None:
    root = Path(__file__).resolve().parent.parent
    rev = _cmd(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"])
    if rev is None:
        return None
    dirty = _cmd(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"])
    return rev + ("+dirty" if dirty else "")


#: the parts of mkbench's source, by the folder each is in a checkout, and the package each installs as
SOURCE_PARTS = {"core": "mkbench", "backends": "mkbench.backends", "tasks": "mkbench.tasks",
                "hardware_profiles": "mkbench.hardware_profiles"}


def _package_dir(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(places[0]).resolve() if places else None


def source_digest() -> str:
    """Hash of mkbench's own source files: identifies the code where no git checkout travels
    (e.g. a copied working tree on a GPU machine). Each part is found where Python imports it from: a
    checkout's folders, or an installed package, where the other parts are folders inside mkbench/
    (each file is named as in a checkout, so both give one digest). Looking for the checkout's folders
    beside the package found none in an installed mkbench, and every such run recorded the digest of
    nothing (e3b0c442...), calls 45-48 among them."""
    dirs = {name: _package_dir(module) for name, module in SOURCE_PARTS.items()}
    h = hashlib.sha256()
    for name, root in dirs.items():
        if root is None:
            continue
        inside = [d for d in dirs.values() if d is not None and d != root and root in d.parents]
        for path in sorted(root.rglob("*")):
            if (path.suffix in (".py", ".yaml") and "__pycache__" not in path.parts
                    and not any(d in path.parents for d in inside)):
                h.update(f"{name}/{path.relative_to(root).as_posix()}".encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


def run_environment(probe: dict[str, Any]) -> dict[str, Any]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return {
        "python": platform.python_version(),
        "packages": versions,
        "torch_runtime": {k: probe.get(k) for k in ("torch", "torch_cuda", "torch_hip", "triton")},
        "device_name": probe.get("device_name", "cpu"),
        "git_revision": git_revision(),
        "source_digest": source_digest(),
        "gpu_state_at_start": gpu_state(),
    }
