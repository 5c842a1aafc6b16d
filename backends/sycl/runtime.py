"""Worker side of the sycl backend's pyopencl path: one OpenCL context and profiling queue per worker, the
candidate's program built once, torch <-> pyopencl.array conversion at the boundary, and a watch
on pyopencl's enqueue functions that counts the candidate's kernel launches.

Importing this module installs the watch (pass-through wrappers around pyopencl's kernel-enqueue
and device-to-host functions) and captures the originals the timer uses. The backend imports it
before it imports a candidate, so a candidate that binds those names at import gets the wrappers
and cannot hand the timer patched ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pyopencl import _cl

from mkbench.errors import CompileError

from .common import OPEN, Cheat, RuleViolation, build_message, build_options, call_problem, source_first_line, to_host, to_torch, watching
from .device import choose, describe, register_intel_cpu_runtime

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
_READS = {"_enqueue_read_buffer": "read of a buffer into host memory", "_enqueue_read_buffer_rect": "rectangular read into host memory",
          "_enqueue_read_image": "read of an image into host memory", "enqueue_map_buffer": "map of a buffer into host memory",
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

class Runtime:
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
        _timed_queues.add(self.queue.int_ptr)


_runtimes: dict[tuple, Runtime] = {}


def runtime_for(hw) -> Runtime:
    key = (hw.device, hw.vendor)
    if key not in _runtimes:
        _runtimes[key] = Runtime(hw)
    return _runtimes[key]


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
                raise AttributeError(f"OPENCL_SOURCE defines no kernel {name!r} (it defines: {', '.join(self._mkb_names) or 'none'})")
            kernel = self._mkb_kernels[name] = cl.Kernel(self._mkb_program, name)
        return kernel


def build(rt: Runtime, source: Any, options: Any, path: Path | None) -> Kernels:
    if not isinstance(source, str):
        raise CompileError(f"{path}: OPENCL_SOURCE must be a str, got {type(source).__name__}")
    try:
        program = cl.Program(rt.context, source).build(options=build_options(options))
    except cl.Error as exc:
        raise CompileError(build_message(str(exc), path, source_first_line(path) if path else None)) from None
    _own_programs[program.int_ptr] = program
    return Kernels(program)


# --- torch <-> pyopencl.array ------------------------------------------------------------

def _read(rt: Runtime, ary) -> np.ndarray:
    host = np.empty(ary.shape, ary.dtype)
    if ary.size:
        ORIGINAL["read_buffer"](rt.queue, ary.base_data, host, ary.offset, None, True)
    return host


class OpenCLCandidate:
    """The callable the worker gets: torch inputs in, torch outputs out. ``upload``, ``launch`` and
    ``download`` are the three steps, apart, for the timer (only ``launch`` is timed)."""

    def __init__(self, rt: Runtime, kernels: Kernels, entry):
        self.rt, self.kernels, self.entry = rt, kernels, entry

    def upload(self, inputs) -> tuple[tuple, tuple]:
        import torch
        args, hosts = [], []
        for v in inputs:
            if isinstance(v, torch.Tensor):
                host = to_host(v)
                args.append(cla.to_device(self.rt.queue, host))
                hosts.append(host)
            else:
                args.append(v)
                hosts.append(None)
        return tuple(args), tuple(hosts)

    def launch(self, args: tuple):
        return self.entry(self.kernels, self.rt.queue, *args)

    def outputs(self, out) -> tuple:
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        for i, o in enumerate(outs):
            if type(o) is not cla.Array:  # a subclass could compute in its own get()
                raise RuleViolation(f"output[{i}] is {type(o).__name__}, expected a pyopencl.array.Array")
            if o.context.int_ptr != self.rt.context.int_ptr:
                raise RuleViolation(f"output[{i}] lives in another OpenCL context")
            if o.size and not o.flags.c_contiguous:
                raise RuleViolation(f"output[{i}] is not C-contiguous")
        return outs

    def download(self, outs: tuple) -> tuple:
        return tuple(to_torch(_read(self.rt, o), self.rt.torch_device) for o in outs)

    def __call__(self, *inputs):
        args, hosts = self.upload(inputs)
        with watching() as w:
            out = self.launch(args)
        problem = watch_intact()
        if problem:
            raise Cheat(problem)
        cheat = call_problem(w)
        if cheat:
            raise Cheat(cheat)
        outs = self.outputs(out)
        for i, (a, host) in enumerate(zip(args, hosts)):
            if host is not None and _read(self.rt, a).tobytes() != host.tobytes():
                raise RuleViolation(f"kernel_function modified input[{i}] on the device")
        result = self.download(outs)
        return result[0] if len(result) == 1 and not isinstance(out, (tuple, list)) else result
