"""Worker side of the sycl backend's SYCL path: one in-order SYCL queue with profiling (dpctl) per
worker (:class:`SyclRuntime`), the candidate's OPENCL_SOURCE built into a SYCL kernel bundle through
the queue's OpenCL backend, and the candidate run through the pyopencl-compatible ``facade``
(:class:`SyclCandidate`).

Tensors cross the boundary as host copies, not DLPack: a SYCL kernel may only be given USM (or
buffer) memory, and torch's CPU tensors are neither, so there is no zero-copy handover to make.
The copies (``memcpy`` between numpy views of the tensors and fresh USM allocations) happen outside
the timed span, as the pyopencl path's do.

USM memory is freed as soon as its Python object goes (``sycl::free``), unlike an OpenCL buffer,
which its pending kernels keep alive. A launch therefore keeps its arguments referenced until the
next ``wait`` on the queue (the call's end, ``queue.finish()``, each timed sample).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Sequence

import dpctl  # the dpctl distribution: imports are absolute, this package's name does not shadow it
import dpctl.memory
import dpctl.program
import numpy as np

from mkbench.errors import CompileError
from mkbench.timing import Timing, TimingSettings

from ..common import RuleViolation, build_error
from ..device import register_intel_cpu_runtime
from ..paths import PathCandidate
from . import facade

# The backend's own kernels on the queue: fills (Array.fill, zeros, the cache flush) for each item
# size, and an empty kernel that stands in for markers where barriers carry no profiling times.
# OpenCL C, one kernel a line (kernel source keeps its long lines, as under backends/*/kernels/).
HELPER_SOURCE = r"""
__kernel void mkbench_fill_1(__global uchar *p, const uchar v, const ulong n) { size_t i = get_global_id(0); if (i < n) p[i] = v; }
__kernel void mkbench_fill_2(__global ushort *p, const ushort v, const ulong n) { size_t i = get_global_id(0); if (i < n) p[i] = v; }
__kernel void mkbench_fill_4(__global uint *p, const uint v, const ulong n) { size_t i = get_global_id(0); if (i < n) p[i] = v; }
__kernel void mkbench_fill_8(__global ulong *p, const ulong v, const ulong n) { size_t i = get_global_id(0); if (i < n) p[i] = v; }
__kernel void mkbench_timestamp(void) { }
"""  # noqa: E501
FILL_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class SyclRuntime:
    """The worker's in-order profiling SYCL queue on a dpctl device (a ``PathRuntime``)."""

    has_markers = True  # barriers
    profiling_errors = (Exception,)  # any failure to time a barrier: the kernel bracket serves

    def __init__(self, device: str):
        register_intel_cpu_runtime()
        self.queue = dpctl.SyclQueue(device, property=["enable_profiling", "in_order"])
        self.device = self.queue.sycl_device
        helpers = dpctl.program.create_program_from_source(self.queue, HELPER_SOURCE)
        self.fill_kernels = {size: helpers.get_sycl_kernel(f"mkbench_fill_{size}") for size in FILL_BITS}
        self.timestamp_kernel = helpers.get_sycl_kernel("mkbench_timestamp")
        self.in_flight: list[list] = []  # arguments of launches not yet waited for
        self.facade_queue = facade.Queue(self)
        self.torch_device = "cpu"

    def allocate(self, nbytes: int):
        return dpctl.memory.MemoryUSMDevice(max(int(nbytes), 1), queue=self.queue)

    def local_memory(self, nbytes: int):
        if dpctl.WorkGroupMemory.is_available():
            return dpctl.WorkGroupMemory(nbytes)
        return dpctl.LocalAccessor("u1", (nbytes,))

    def submit(self, kernel, args: list, gsize: tuple, lsize: tuple | None, name: str = "kernel"):
        """An asynchronous launch; sizes in OpenCL's order, reversed for SYCL."""
        self.in_flight.append(args)
        try:
            return self.queue.submit_async(kernel, args, list(reversed(gsize)), None if lsize is None
                                           else list(reversed(lsize)))
        except dpctl.SyclKernelInvalidRangeError as exc:
            raise ValueError(f"prog.{name}: the SYCL runtime refused global size {gsize} "
                             f"with local size {lsize}: {exc}") from None
        except dpctl.SyclKernelSubmitError as exc:
            raise RuntimeError(f"prog.{name}: the SYCL runtime refused the launch ({exc}); a scalar whose numpy type "
                               "is not the parameter's width (np.int32 for a long) or a local size over the device's "
                               "limit does this") from None

    def fill(self, memory, value: np.ndarray, count: int) -> None:
        bits = FILL_BITS[value.dtype.itemsize]
        pattern = facade.SCALAR_CTYPES[np.dtype(bits)](int(value.reshape(1).view(bits)[0]))
        self.submit(self.fill_kernels[value.dtype.itemsize],
                    [memory, pattern, facade.SCALAR_CTYPES[np.dtype(np.uint64)](count)],
                    (count,), None, "fill")

    def wait(self) -> None:
        self.queue.wait()
        self.in_flight.clear()

    def upload_into(self, memory, host: np.ndarray) -> None:
        if host.nbytes:
            self.queue.memcpy(memory, host, host.nbytes)

    def download(self, memory, shape, dtype) -> np.ndarray:
        host = np.empty(shape, dtype)
        if host.nbytes:
            self.queue.memcpy(host, memory, host.nbytes)
        return host

    def importing(self):
        return facade.installed()  # the candidate's `import pyopencl` finds the facade

    def build_program(self, source: str, flags: list[str], path: Path | None) -> facade.Program:
        try:
            program = dpctl.program.create_program_from_source(self.queue, source, " ".join(flags))
        except dpctl.program.SyclProgramCompilationError as exc:
            seen = build_log(self, source, flags)
            if "log" in seen:
                raise build_error(seen["log"], path) from None
            why = ("OpenCL on the same device builds it" if "built" in seen
                   else f"no build log to show: {seen['missing']}")
            raise CompileError(f"{path}: the SYCL runtime could not build OPENCL_SOURCE "
                               f"({type(exc).__name__}{': ' + str(exc) if str(exc) else ''}); "
                               f"{why}") from None
        return facade.Program(self, program, _KERNEL_NAME.findall(source))

    def candidate(self, program: facade.Program, entry) -> SyclCandidate:
        return SyclCandidate(self, program, entry)

    # the profiling clock
    def submit_marker(self) -> dpctl.SyclEvent:
        return self.queue.submit_barrier()

    def submit_timestamp(self) -> dpctl.SyclEvent:
        # straight to the queue: not a launch of the candidate's, not kept in in_flight (no arguments)
        return self.queue.submit_async(self.timestamp_kernel, [], [1], [1])

    def start_ns(self, event: dpctl.SyclEvent) -> int:
        return event.profiling_info_start

    def end_ns(self, event: dpctl.SyclEvent) -> int:
        return event.profiling_info_end


# --- building the candidate's program -------------------------------------------------------

_KERNEL_NAME = re.compile(r"\b(?:__kernel|kernel)\b[^;{}]*?\bvoid\s+(\w+)\s*\(")

# dpctl's SyclProgramCompilationError carries no build log. The same source is then built by
# pyopencl on the same OpenCL platform and device (the compiler the SYCL runtime called), in a
# subprocess, so this worker never loads pyopencl's ICD loader beside the SYCL runtime's.
_LOG_SCRIPT = r"""
import json, sys
import pyopencl as cl
req = json.loads(sys.stdin.read())
for p in cl.get_platforms():
    if p.name == req["platform"]:
        for d in p.get_devices():
            if d.name == req["device"]:
                try:
                    cl.Program(cl.Context([d]), req["source"]).build(options=req["options"])
                except cl.Error as exc:
                    print(json.dumps({"log": str(exc)}))
                else:
                    print(json.dumps({"built": True}))
                raise SystemExit
print(json.dumps({"missing": f"no OpenCL device {req['device']!r} on a platform {req['platform']!r}"}))
"""
LOG_TIMEOUT_S = 120.0


def build_log(rt: SyclRuntime, source: str, options: list[str]) -> dict[str, Any]:
    """The OpenCL build of ``source`` on the SYCL queue's device, through pyopencl: {"log": text},
    {"built": True} or {"missing": why not}."""
    request = {"platform": rt.device.sycl_platform.name, "device": rt.device.name, "source": source, "options": options}
    try:
        proc = subprocess.run([sys.executable, "-c", _LOG_SCRIPT], input=json.dumps(request), capture_output=True,
                              text=True,
                              timeout=LOG_TIMEOUT_S)
        lines = proc.stdout.strip().splitlines()
        if lines:
            return json.loads(lines[-1])
        return {"missing": (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]}
    except (subprocess.TimeoutExpired, ValueError) as exc:
        return {"missing": f"{type(exc).__name__}: {exc}"}


# --- the candidate ------------------------------------------------------------------------------

class SyclCandidate(PathCandidate):
    """A candidate on the SYCL path: arrays are the facade's, in USM memory on the runtime's queue.
    Its ``launch`` needs the facade installed (``calling`` in a call; the timer installs it too)."""

    on_sycl_queue = True  # timed by the SYCL path's timer

    def __init__(self, rt: SyclRuntime, program: facade.Program, entry):
        super().__init__(rt, program, rt.facade_queue, entry)

    def to_device(self, host: np.ndarray) -> facade.Array:
        return facade.to_device(self.queue, host)

    def read(self, ary: facade.Array) -> np.ndarray:
        return self.rt.download(ary.data._mkb_memory, ary.shape, ary.dtype)

    def check_output(self, i: int, o) -> None:
        if type(o) is not facade.Array:  # a subclass could compute in its own get()
            raise RuleViolation(f"output[{i}] is {type(o).__name__}, expected a pyopencl.array.Array")
        if o.queue is not self.queue:
            raise RuleViolation(f"output[{i}] lives on another queue")

    @contextmanager
    def calling(self):
        # the facade for the candidate's pyopencl; the wait keeps the launches' USM arguments alive
        # until their kernels are done (see the module's docstring)
        try:
            with facade.installed():
                yield
        finally:
            self.rt.wait()

    def watch_intact(self) -> str | None:
        return facade.watch_intact()

    def time(self, arg_sets: Sequence[Sequence], hw, settings: TimingSettings) -> Timing:
        from .timing import time_sycl
        return time_sycl(self, arg_sets, hw, settings)
