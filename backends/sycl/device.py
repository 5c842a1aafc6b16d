"""Which OpenCL device a hardware profile means, decided the same way in the parent (from a
subprocess's listing, so a broken ICD cannot take the parent down) and in the worker.

A ``cuda`` profile needs its vendor's GPU platform (NVIDIA's OpenCL driver for ``vendor: nvidia``);
the ``cpu`` profile takes PoCL's CPU device, or another OpenCL CPU device (Intel's CPU runtime) where
PoCL is absent or cannot build kernels on this host.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mkbench.errors import Unavailable

POCL = "Portable Computing Language"
# Substrings of the OpenCL platform name that belong to each profile vendor.
VENDOR_PLATFORMS = {"nvidia": ("NVIDIA",), "amd": ("AMD",), "intel": ("Intel",)}
PROBE_TIMEOUT_S = 120.0


def intel_cpu_vendors() -> Path | None:
    """The vendors directory of Intel's OpenCL CPU runtime as the ``intel-opencl-rt`` wheel installs
    it (``<env>/etc/OpenCL/vendors``), once its .icd names the library by its real path (the wheel's
    post-link step, which .ci/setup runs), or None."""
    vendors = Path(sys.prefix) / "etc" / "OpenCL" / "vendors"
    try:
        lib = Path((vendors / "intel-cpu.icd").read_text().strip())
    except OSError:
        return None
    return vendors if lib.is_absolute() and lib.exists() else None


def register_intel_cpu_runtime() -> None:
    """Point the OpenCL ICD loaders (pyopencl's ocl-icd, which also keeps PoCL, and the Khronos
    loader under the SYCL runtime) at Intel's CPU runtime, unless OCL_ICD_VENDORS is already set
    (the GPU machine sets it for NVIDIA's driver). Intel's ICD exports only the ICD entry points,
    which ocl-icd accepts with OCL_ICD_ASSUME_ICD_EXTENSION. Subprocesses inherit both."""
    vendors = intel_cpu_vendors()
    if vendors is None or os.environ.get("OCL_ICD_VENDORS"):
        return
    os.environ["OCL_ICD_VENDORS"] = str(vendors)
    os.environ.setdefault("OCL_ICD_ASSUME_ICD_EXTENSION", "1")


# A CPU device must also build a trivial kernel: PoCL 3.0's LLVM 14 does not know every host CPU
# (on a newer AMD EPYC it lists the device, then every build fails with "unknown target CPU
# 'generic'"), and such a device must not be chosen over one that works.
PROBE_KERNEL = "__kernel void mkbench_probe(__global float *x) { x[get_global_id(0)] = 1.0f; }"


def describe(platforms) -> list[dict[str, Any]]:
    """Platforms and their devices as plain data (the parent's probe and the worker both use it);
    CPU devices carry ``build_error``, None when a trivial kernel builds."""
    import pyopencl as cl
    out = []
    for p in platforms:
        try:
            devices = p.get_devices()
        except cl.Error:  # a platform with no devices raises DEVICE_NOT_FOUND
            devices = []
        listed = []
        for d in devices:
            entry = {"name": d.name, "cpu": bool(d.type & cl.device_type.CPU), "gpu": bool(d.type & cl.device_type.GPU)}
            if entry["cpu"]:
                entry["build_error"] = _build_error(cl, d)
            listed.append(entry)
        out.append({"name": p.name, "vendor": p.vendor, "version": p.version, "devices": listed})
    return out


def _build_error(cl, device) -> str | None:
    try:
        cl.Program(cl.Context([device]), PROBE_KERNEL).build()
    except cl.Error as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if "error" in ln.lower() and "clBuildProgram" not in ln]
        return lines[0] if lines else str(exc).splitlines()[0]
    return None


_LIST_SCRIPT = r"""
import json, pyopencl as cl
from mkbench.backends.sycl.device import describe
try:
    platforms = cl.get_platforms()
except cl.Error:  # the ICD loader found no platform at all
    platforms = []
print(json.dumps(describe(platforms)))
"""


def _seen(listing: list[dict]) -> str:
    if not listing:
        return "no OpenCL platforms at all"
    return "platforms seen: " + "; ".join(
        f"{p['name']} [{', '.join(d['name'] for d in p['devices']) or 'no devices'}]" for p in listing)


def choose(listing: list[dict], device: str, vendor: str, prefer_name: str | None = None) -> tuple[int, int]:
    """(platform index, device index) for a profile's device kind and vendor, or Unavailable."""
    if device == "cpu":
        order = sorted(range(len(listing)), key=lambda i: listing[i]["name"] != POCL)  # PoCL first
        broken = []
        for i in order:
            for j, d in enumerate(listing[i]["devices"]):
                if d["cpu"] and not d.get("build_error"):
                    return i, j
                if d["cpu"]:
                    broken.append(f"{listing[i]['name']} [{d['name']}] cannot build a kernel here: {d['build_error']}")
        if broken:
            raise Unavailable("no OpenCL CPU device that builds kernels (Intel's CPU runtime works where PoCL does not: "
                              "pip install intel-opencl-rt); " + "; ".join(broken))
        raise Unavailable("no OpenCL CPU device (install PoCL: pip install pocl-binary-distribution); " + _seen(listing))
    if device not in ("cuda", "xpu"):
        raise Unavailable(f"OpenCL has no {device} devices; the sycl backend runs on GPUs and CPUs")
    hints = VENDOR_PLATFORMS.get(vendor)
    if not hints:
        raise Unavailable(f"no known OpenCL platform for vendor {vendor!r}")
    matches = [(i, j, d) for i, p in enumerate(listing) if any(h.lower() in p["name"].lower() for h in hints)
               for j, d in enumerate(p["devices"]) if d["gpu"]]
    if not matches:
        hint = (" (NVIDIA's OpenCL ICD is not registered: libnvidia-opencl.so.1 must be listed in an .icd file "
                "under /etc/OpenCL/vendors or OCL_ICD_VENDORS)") if vendor == "nvidia" else ""
        raise Unavailable(f"no {vendor} OpenCL GPU platform{hint}; " + _seen(listing))
    if prefer_name:
        for i, j, d in matches:
            if d["name"] == prefer_name:
                return i, j
    return matches[0][0], matches[0][1]


_probe_cache: dict[str, Any] = {}


def probe_listing() -> list[dict]:
    """Platforms and devices, listed by a short-lived subprocess (cached for this process)."""
    if "listing" in _probe_cache:
        return _probe_cache["listing"]
    if "error" in _probe_cache:
        raise Unavailable(_probe_cache["error"])
    try:
        proc = subprocess.run([sys.executable, "-c", _LIST_SCRIPT], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _probe_cache["error"] = f"listing OpenCL platforms took more than {PROBE_TIMEOUT_S:.0f} s"
        raise Unavailable(_probe_cache["error"]) from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        _probe_cache["error"] = f"listing OpenCL platforms failed: {tail[0]}"
        raise Unavailable(_probe_cache["error"])
    try:
        listing = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        _probe_cache["error"] = f"listing OpenCL platforms gave unreadable output: {proc.stdout[-200:]!r}"
        raise Unavailable(_probe_cache["error"]) from None
    _probe_cache["listing"] = listing
    return listing
