"""Worker side of the sycl backend's pyopencl path: one OpenCL context and profiling queue per worker
(:class:`OpenCLRuntime`), the candidate's program built once, torch <-> pyopencl.array conversion at
the boundary (:class:`OpenCLCandidate`), and a watch on pyopencl's enqueue functions that counts the
candidate's kernel launches.

Importing this module installs the watch (pass-through wrappers around pyopencl's kernel-enqueue
and device-to-host functions) and captures the originals the timer uses. The backend imports it
before it imports a candidate, so a candidate that binds those names at import gets the wrappers
and cannot hand the timer patched ones.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Sequence

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pyopencl import _cl

from mkbench.timing import Timing, TimingSettings

from ..common import OPEN, RuleViolation, build_error
from ..device import choose, describe, register_intel_cpu_runtime
from ..paths import PathCandidate

# pyopencl's own kernels a candidate may launch without doing its computation in them: `fill`
# backs Array.fill and, on NVIDIA for buffers over 2 GiB, cla.zeros.
ALLOWED_LIBRARY_KERNELS = {"fill"}

# The originals, captured before any candidate is imported: the timer calls these directly.
ORIGINAL = {
    "enqueue_nd_range_kernel": _cl.enqueue_nd_range_kernel,
    "marker": getattr(_cl, "_enqueue_marker_with_wait_list", None),
    "fill_buffer": _cl._enqueue_fill_buffer,
    "read_buffer": _cl._enqueue_read_buffer,
    "finish": _cl.CommandQueue.finish,
    "profiling_info": _cl.Event.get_profiling_info,
}


# --- the watch -------------------------------------------------------------------------

# Candidate programs by handle, kept alive: a freed program's handle can be reused by one of
# pyopencl's library programs, which would then count as the candidate's.
_own_programs: dict[int, cl.Program] = {}
_timed_queues: set[int] = set()


def _note_launch(queue, kernel) -> None:
    # Asked apart: Intel's CPU runtime refuses CL_KERNEL_PROGRAM for pyopencl's own cached kernels
    # (a kernel whose program cannot be named is not the candidate's) but still gives the name.
    try:
        own = kernel.program.int_ptr in _own_programs
    except Exception:
        own = False
    try:
        name = kernel.function_name
    except Exception:  # an object pyopencl itself would reject; let the enqueue report it
        name = "?"
    foreign_queue = getattr(queue, "int_ptr", None) not in _timed_queues
    for w in OPEN:
        if own:
            w.own += 1
        elif name not in ALLOWED_LIBRARY_KERNELS:
            w.library.append(name)
        w.other_queue += foreign_queue


def _launch_wrapper(original):
    def enqueue_nd_range_kernel(queue, kernel, *args, **kwargs):
        if OPEN:
            _note_launch(queue, kernel)
        return original(queue, kernel, *args, **kwargs)
    enqueue_nd_range_kernel.mkbench_watch = True
    return enqueue_nd_range_kernel


def _readback_wrapper(original, what: str):
    def read(*args, **kwargs):
        if OPEN:
            for w in OPEN:
                w.readbacks.append(what)
        return original(*args, **kwargs)
    read.mkbench_watch = True
    return read


# Kernel.__call__ reaches _cl.enqueue_nd_range_kernel through pyopencl's generated invoker, which
# looks the name up on every call; pyopencl.enqueue_nd_range_kernel is the same function under a
# second name. Array.get, enqueue_copy to a host array and map_to_host end in the _cl functions below.
_READS = {"_enqueue_read_buffer": "read of a buffer into host memory",
          "_enqueue_read_buffer_rect": "rectangular read into host memory",
          "_enqueue_read_image": "read of an image into host memory",
          "enqueue_map_buffer": "map of a buffer into host memory",
          "enqueue_map_image": "map of an image into host memory", "_enqueue_svm_map": "SVM map into host memory"}


def _install() -> None:
    if getattr(_cl.enqueue_nd_range_kernel, "mkbench_watch", False):
        return
    launch = _launch_wrapper(_cl.enqueue_nd_range_kernel)
    _cl.enqueue_nd_range_kernel = launch
    cl.enqueue_nd_range_kernel = launch
    for name, what in _READS.items():
        original = getattr(_cl, name, None)
        if original is None:
            continue
        wrapped = _readback_wrapper(original, what)
        setattr(_cl, name, wrapped)
        if getattr(cl, name, None) is original:
            setattr(cl, name, wrapped)


_install()


def watch_intact() -> str | None:
    """Why launches can no longer be counted (a candidate replaced the wrappers), or None."""
    for owner, label in ((_cl, "pyopencl._cl"), (cl, "pyopencl")):
        if not getattr(getattr(owner, "enqueue_nd_range_kernel", None), "mkbench_watch", False):
            return f"{label}.enqueue_nd_range_kernel was replaced: kernel launches can no longer be counted"
    return None


# --- device, context and queue ------------------------------------------------------------

class OpenCLRuntime:
    """The worker's OpenCL context and profiling queue on the profile's device (a ``PathRuntime``)."""

    has_markers = ORIGINAL["marker"] is not None  # pyopencl built without markers has no such function
    profiling_errors = (cl.Error,)
    TIMESTAMP_SOURCE = "__kernel void mkbench_timestamp(void) { }"

    def __init__(self, hw):
        register_intel_cpu_runtime()
        try:
            platforms = cl.get_platforms()
        except cl.Error:
            platforms = []
        prefer = None
        if hw.device == "cuda":
            import torch
            if torch.cuda.is_available():
                prefer = torch.cuda.get_device_name(0)  # the GPU torch uses, where several are visible
        i, j = choose(describe(platforms), hw.device, hw.vendor, prefer)
        self.device = platforms[i].get_devices()[j]
        self.platform_name = platforms[i].name
        self.context = cl.Context([self.device])
        self.queue = cl.CommandQueue(self.context, self.device, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self.is_cpu = bool(self.device.type & cl.device_type.CPU)
        self.torch_device = hw.device
        self._timestamp_kernel: cl.Kernel | None = None  # built on first use: only the kernel bracket needs it
        _timed_queues.add(self.queue.int_ptr)

    def importing(self):
        # nothing to swap in: the watch was installed when this module was imported
        return nullcontext()

    def build_program(self, source: str, flags: list[str], path: Path | None) -> Kernels:
        try:
            program = cl.Program(self.context, source).build(options=flags)
        except cl.Error as exc:
            raise build_error(str(exc), path) from None
        _own_programs[program.int_ptr] = program
        return Kernels(program)

    def candidate(self, program: Kernels, entry) -> OpenCLCandidate:
        return OpenCLCandidate(self, program, entry)

    # the profiling clock, through the originals (a candidate's wrappers cannot touch the timer)
    def wait(self) -> None:
        ORIGINAL["finish"](self.queue)

    def submit_marker(self) -> cl.Event:
        return ORIGINAL["marker"](self.queue, None)

    def submit_timestamp(self) -> cl.Event:
        if self._timestamp_kernel is None:
            self._timestamp_kernel = cl.Kernel(cl.Program(self.context, self.TIMESTAMP_SOURCE).build(),
                                               "mkbench_timestamp")
        return ORIGINAL["enqueue_nd_range_kernel"](self.queue, self._timestamp_kernel, (1,), (1,))

    def start_ns(self, event: cl.Event) -> int:
        return int(ORIGINAL["profiling_info"](event, cl.profiling_info.START))

    def end_ns(self, event: cl.Event) -> int:
        return int(ORIGINAL["profiling_info"](event, cl.profiling_info.END))


# --- building the candidate's program -------------------------------------------------------

class Kernels:
    """The built program as the candidate sees it: ``prog.<name>`` is the kernel of that name,
    created once (pyopencl would create a new one on every attribute access). The backend's own
    attributes carry a ``_mkb_`` prefix, so no kernel name is shadowed."""

    def __init__(self, program: cl.Program):
        self._mkb_program = program
        self._mkb_names = [n for n in program.get_info(cl.program_info.KERNEL_NAMES).split(";") if n]
        self._mkb_kernels: dict[str, cl.Kernel] = {}

    def __getattr__(self, name: str) -> cl.Kernel:
        if name.startswith("__") or name.startswith("_mkb_"):
            raise AttributeError(name)
        kernel = self._mkb_kernels.get(name)
        if kernel is None:
            if name not in self._mkb_names:
                raise AttributeError(f"OPENCL_SOURCE defines no kernel {name!r} (it defines: "
                                     f"{', '.join(self._mkb_names) or 'none'})")
            kernel = self._mkb_kernels[name] = cl.Kernel(self._mkb_program, name)
        return kernel


# --- torch <-> pyopencl.array ------------------------------------------------------------

class OpenCLCandidate(PathCandidate):
    """A candidate on the pyopencl path: arrays are pyopencl.array.Arrays in the runtime's context."""

    def __init__(self, rt: OpenCLRuntime, kernels: Kernels, entry):
        super().__init__(rt, kernels, rt.queue, entry)

    def to_device(self, host: np.ndarray) -> cla.Array:
        return cla.to_device(self.rt.queue, host)

    def read(self, ary: cla.Array) -> np.ndarray:
        host = np.empty(ary.shape, ary.dtype)
        if ary.size:
            ORIGINAL["read_buffer"](self.rt.queue, ary.base_data, host, ary.offset, None, True)
        return host

    def check_output(self, i: int, o) -> None:
        if type(o) is not cla.Array:  # a subclass could compute in its own get()
            raise RuleViolation(f"output[{i}] is {type(o).__name__}, expected a pyopencl.array.Array")
        if o.context.int_ptr != self.rt.context.int_ptr:
            raise RuleViolation(f"output[{i}] lives in another OpenCL context")
        if o.size and not o.flags.c_contiguous:
            raise RuleViolation(f"output[{i}] is not C-contiguous")

    def calling(self):
        return nullcontext()  # the watch is always installed

    def watch_intact(self) -> str | None:
        return watch_intact()

    def time(self, arg_sets: Sequence[Sequence], hw, settings: TimingSettings) -> Timing:
        from .timing import time_opencl
        return time_opencl(self, arg_sets, hw, settings)
