"""Which OpenCL device a hardware profile means, decided the same way in the parent (from a
subprocess's listing, so a broken ICD cannot take the parent down) and in the worker.

A ``cuda`` profile needs its vendor's GPU platform (NVIDIA's OpenCL driver for ``vendor: nvidia``);
the ``cpu`` profile takes PoCL's CPU device, or another CPU device where PoCL is absent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from mkbench.errors import Unavailable

POCL = "Portable Computing Language"
# Substrings of the OpenCL platform name that belong to each profile vendor.
VENDOR_PLATFORMS = {"nvidia": ("NVIDIA",), "amd": ("AMD",), "intel": ("Intel",)}
PROBE_TIMEOUT_S = 120.0

_LIST_SCRIPT = r"""
import json, pyopencl as cl
out = []
try:
    platforms = cl.get_platforms()
except cl.Error:  # the ICD loader found no platform at all
    platforms = []
for p in platforms:
    try:
        devices = p.get_devices()
    except cl.Error:  # a platform with no devices raises DEVICE_NOT_FOUND
        devices = []
    out.append({"name": p.name, "vendor": p.vendor, "version": p.version,
                "devices": [{"name": d.name, "cpu": bool(d.type & cl.device_type.CPU),
                             "gpu": bool(d.type & cl.device_type.GPU)} for d in devices]})
print(json.dumps(out))
"""


def describe(platforms) -> list[dict[str, Any]]:
    """The same listing as the parent's probe, from live pyopencl platform objects."""
    import pyopencl as cl
    out = []
    for p in platforms:
        try:
            devices = p.get_devices()
        except cl.Error:
            devices = []
        out.append({"name": p.name, "vendor": p.vendor, "version": p.version,
                    "devices": [{"name": d.name, "cpu": bool(d.type & cl.device_type.CPU),
                                 "gpu": bool(d.type & cl.device_type.GPU)} for d in devices]})
    return out


def _seen(listing: list[dict]) -> str:
    if not listing:
        return "no OpenCL platforms at all"
    return "platforms seen: " + "; ".join(
        f"{p['name']} [{', '.join(d['name'] for d in p['devices']) or 'no devices'}]" for p in listing)


def choose(listing: list[dict], device: str, vendor: str, prefer_name: str | None = None) -> tuple[int, int]:
    """(platform index, device index) for a profile's device kind and vendor, or Unavailable."""
    if device == "cpu":
        order = sorted(range(len(listing)), key=lambda i: listing[i]["name"] != POCL)  # PoCL first
        for i in order:
            for j, d in enumerate(listing[i]["devices"]):
                if d["cpu"]:
                    return i, j
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
