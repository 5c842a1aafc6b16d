"""Which device a hardware profile means, and through which runtime the candidates run there,
decided in the parent from subprocess probes (a broken ICD or SYCL runtime cannot take the parent
down) and handed to the workers.

A ``cuda`` profile needs its vendor's GPU platform (NVIDIA's OpenCL driver for ``vendor: nvidia``),
driven by pyopencl. The ``cpu`` profile runs the candidates through a SYCL queue (dpctl) on a SYCL
CPU device where one opens, builds and times a probe kernel; otherwise through pyopencl on PoCL's CPU
device, or another OpenCL CPU device (Intel's CPU runtime) where PoCL is absent or cannot build
kernels on this host, with the reason SYCL was not used.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
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
            raise Unavailable("no OpenCL CPU device that builds kernels (Intel's CPU runtime works where PoCL does "
                              "not: pip install intel-opencl-rt); " + "; ".join(broken))
        raise Unavailable("no OpenCL CPU device (install PoCL: pip install pocl-binary-distribution); "
                          + _seen(listing))
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
        proc = subprocess.run([sys.executable, "-c", _LIST_SCRIPT], capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT_S)
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


# --- the execution path: a SYCL queue on the cpu profile, pyopencl elsewhere -----------------------

# "sycl" or "opencl" forces the path on the cpu profile (unset: SYCL where a SYCL CPU queue works).
# The parent sets it, with the device and the description, for its workers.
PATH_ENV = "MKBENCH_SYCL_CPU_PATH"
DEVICE_ENV = "MKBENCH_SYCL_DEVICE"
DESCRIPTION_ENV = "MKBENCH_SYCL_PATH"

_SYCL_PROBE_SCRIPT = r"""
import json
import numpy as np
try:
    import dpctl, dpctl.memory, dpctl.program
except Exception as exc:
    print(json.dumps({"error": f"dpctl does not import: {type(exc).__name__}: {exc}"}))
    raise SystemExit
from mkbench.backends.sycl.device import PROBE_KERNEL
tried = []
for d in dpctl.get_devices(device_type="cpu"):
    where = f"{d.filter_string} {d.name} [{d.sycl_platform.name}]"
    try:
        q = dpctl.SyclQueue(d, property=["enable_profiling", "in_order"])
        kernel = dpctl.program.create_program_from_source(q, PROBE_KERNEL).get_sycl_kernel("mkbench_probe")
        mem = dpctl.memory.MemoryUSMDevice(16, queue=q)
        launch = q.submit_async(kernel, [mem], [4])
        q.wait()
        got = np.zeros(4, np.float32)
        q.memcpy(got, mem, 16)
        if not (got == 1).all():
            tried.append(f"{where}: the probe kernel computed {got.tolist()}")
        elif not launch.profiling_info_end >= launch.profiling_info_start > 0:
            tried.append(f"{where}: its kernel events carry no profiling times")
        else:
            print(json.dumps({"device": d.filter_string, "name": d.name, "platform": d.sycl_platform.name,
                              "driver": d.driver_version, "dpctl": dpctl.__version__}))
            raise SystemExit
    except Exception as exc:  # a device that cannot open a profiling queue or build: try the next
        tried.append(f"{where}: {type(exc).__name__}: {exc}".rstrip(": "))
print(json.dumps({"error": "; ".join(tried) if tried else "dpctl lists no SYCL CPU device (Intel's OpenCL CPU runtime "
                  "must be registered, and intel-sycl-rt must have its OpenCL adapter: 2026.1.x, not 2026.2)"}))
"""


def probe_sycl_cpu() -> dict[str, str]:
    """The SYCL CPU device that runs a probe kernel through dpctl, with profiling times on its event ({"device": filter
    string, "name", "platform", "driver", "dpctl"}), or {"error": why none}; from a short-lived
    subprocess, cached for this process."""
    if "sycl" in _probe_cache:
        return _probe_cache["sycl"]
    if importlib.util.find_spec("dpctl") is None:
        result = {"error": "dpctl is not installed (pip install dpctl with intel-sycl-rt 2026.1.x: see "
                           "docs/backends/sycl.md)"}
    else:
        register_intel_cpu_runtime()
        try:
            proc = subprocess.run([sys.executable, "-c", _SYCL_PROBE_SCRIPT], capture_output=True, text=True,
                                  timeout=PROBE_TIMEOUT_S)
            lines = proc.stdout.strip().splitlines()
            result = json.loads(lines[-1]) if lines else {}
            if not result:
                tail = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}, no output"])[-1]
                result = {"error": f"probing SYCL devices failed: {tail}"}
        except subprocess.TimeoutExpired:
            result = {"error": f"probing SYCL devices took more than {PROBE_TIMEOUT_S:.0f} s"}
        except ValueError:
            result = {"error": f"probing SYCL devices gave unreadable output: {proc.stdout[-200:]!r}"}
    _probe_cache["sycl"] = result
    return result


@dataclass(frozen=True)
class ExecutionPath:
    """How candidates run on a profile: through a SYCL queue on ``sycl_device`` (a dpctl filter
    string), or through pyopencl when it is None. ``description`` says which, on what, and on the
    cpu profile why not SYCL when it is not."""

    sycl_device: str | None
    description: str

    @property
    def sycl(self) -> bool:
        return self.sycl_device is not None


def execution_path(hw) -> ExecutionPath:
    """The path for ``hw``: a SYCL queue on the cpu profile where one works (or where the parent
    found one, in a worker), else pyopencl. Unavailable when PATH_ENV=sycl and none works."""
    if hw.device != "cpu":
        return ExecutionPath(None, f"pyopencl on the {hw.vendor} OpenCL GPU platform "
                                   "(SYCL queues run on the cpu profile only)")
    forced = os.environ.get(PATH_ENV, "").strip().lower()
    if forced not in ("", "sycl", "opencl"):
        raise Unavailable(f"{PATH_ENV}={forced!r}: expected 'sycl' or 'opencl' (or unset: SYCL where it works)")
    if forced == "opencl":
        return ExecutionPath(None, os.environ.get(DESCRIPTION_ENV) or f"pyopencl, not a SYCL queue: {PATH_ENV}=opencl")
    if forced == "sycl" and os.environ.get(DEVICE_ENV):  # the parent's probe, handed to its workers
        return ExecutionPath(os.environ[DEVICE_ENV], os.environ.get(DESCRIPTION_ENV)
                             or f"SYCL queue on {os.environ[DEVICE_ENV]}")
    probe = probe_sycl_cpu()
    if "device" in probe:
        return ExecutionPath(probe["device"],
                             f"SYCL queue (dpctl {probe['dpctl']}) on {probe['device']}: {probe['name']} "
                                              f"[{probe['platform']}, driver {probe['driver']}]")
    if forced == "sycl":
        raise Unavailable(f"{PATH_ENV}=sycl, but no SYCL CPU queue works here: {probe['error']}")
    return ExecutionPath(None, f"pyopencl, not a SYCL queue: {probe['error']}")


def path_env(path: ExecutionPath) -> dict[str, str]:
    """The environment that hands the parent's decision to a worker (no probe there)."""
    if path.sycl:
        return {PATH_ENV: "sycl", DEVICE_ENV: path.sycl_device, DESCRIPTION_ENV: path.description}
    return {PATH_ENV: "opencl", DESCRIPTION_ENV: path.description}
