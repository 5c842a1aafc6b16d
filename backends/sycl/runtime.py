"""Worker side of the sycl backend: one OpenCL context and profiling queue per worker, the
candidate's program built once, torch <-> pyopencl.array conversion at the boundary, and a watch
on pyopencl's enqueue functions that counts the candidate's kernel launches.

Importing this module installs the watch (pass-through wrappers around pyopencl's kernel-enqueue
and device-to-host functions) and captures the originals the timer uses. The backend imports it
before it imports a candidate, so a candidate that binds those names at import gets the wrappers
and cannot hand the timer patched ones.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pyopencl import _cl

from mkbench.errors import CompileError, IntegrityViolation

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

@dataclass
class Watch:
    """What happened on the OpenCL side while the watch was open."""

    own: int = 0                                         # launches of kernels built from OPENCL_SOURCE
    library: list[str] = field(default_factory=list)     # other kernels, e.g. pyopencl.array arithmetic
    readbacks: list[str] = field(default_factory=list)   # device -> host transfers and maps
    other_queue: int = 0                                 # launches on a queue the timer does not see


_open: list[Watch] = []
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
    for w in _open:
        if own:
            w.own += 1
        elif name not in ALLOWED_LIBRARY_KERNELS:
            w.library.append(name)
        w.other_queue += foreign_queue


def _launch_wrapper(original):
    def enqueue_nd_range_kernel(queue, kernel, *args, **kwargs):
        if _open:
            _note_launch(queue, kernel)
        return original(queue, kernel, *args, **kwargs)
    enqueue_nd_range_kernel.mkbench_watch = True
    return enqueue_nd_range_kernel


def _readback_wrapper(original, what: str):
    def read(*args, **kwargs):
        if _open:
            for w in _open:
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


class watching:
    """Context manager: a :class:`Watch` that records everything enqueued inside it (nests)."""

    def __enter__(self) -> Watch:
        self.watch = Watch()
        _open.append(self.watch)
        return self.watch

    def __exit__(self, *exc) -> None:
        _open.remove(self.watch)


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


# Build-log locations: PoCL and NVIDIA name a file or <kernel>; Intel's CPU runtime starts the line
# with a number of its own ("16:4:72: error: ...").
_LOCATION = re.compile(r"(?:[^\s:]*\.cl|<kernel>|<source>|<stdin>|input|^\d+):(\d+):(\d+):", re.M)


def source_first_line(path: Path) -> int | None:
    """The file line holding line 1 of a literal ``OPENCL_SOURCE = r\"\"\"...\"\"\"``, or None when the
    source is not a plain literal (built at import) or its lines cannot be matched to the file's."""
    try:
        text = Path(path).read_text()
        tree = ast.parse(text)
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    lines = text.splitlines()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "OPENCL_SOURCE" for t in targets):
            value = node.value
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                return None
            first = value.lineno
            for k, line in enumerate(value.value.splitlines()[1:8], start=1):  # spot-check a few lines
                if first - 1 + k >= len(lines) or line.strip() and line.strip() not in lines[first - 1 + k]:
                    return None
            return first
    return None


def build_message(exc: Exception, path: Path | None, first_line: int | None) -> str:
    """The OpenCL build log with kernel-source locations rewritten as ``file.py:line:col:``."""
    text = str(exc)
    marker = text.find("Build on ")
    log = text[text.find(":\n", marker) + 2:] if marker >= 0 and text.find(":\n", marker) >= 0 else text
    log = log.strip()

    def where(m: re.Match) -> str:
        line, col = int(m.group(1)), m.group(2)
        if path is not None and first_line is not None:
            return f"{path}:{first_line + line - 1}:{col}:"
        return f"OPENCL_SOURCE:{line}:{col}:"
    log = _LOCATION.sub(where, log)
    head = next((ln.strip() for ln in log.splitlines() if "error" in ln.lower()), log.splitlines()[0] if log else text)
    m = re.match(r"error:\s*(\S+:\d+:\d+:)\s*(.*)", head)  # PoCL puts the word before the location
    if m:
        head = f"{m.group(1)} error: {m.group(2)}"
    return f"{head}\nOpenCL build log:\n{log}"


def build(rt: Runtime, source: Any, options: Any, path: Path | None) -> Kernels:
    if not isinstance(source, str):
        raise CompileError(f"{path}: OPENCL_SOURCE must be a str, got {type(source).__name__}")
    if isinstance(options, str):
        options = options.split()
    options = [str(o) for o in (options or [])]
    try:
        program = cl.Program(rt.context, source).build(options=options)
    except cl.Error as exc:
        raise CompileError(build_message(exc, path, source_first_line(path) if path else None)) from None
    _own_programs[program.int_ptr] = program
    return Kernels(program)


# --- torch <-> pyopencl.array ------------------------------------------------------------

class RuleViolation(RuntimeError):
    """The candidate did something the contract forbids; the message says what."""


class Cheat(RuleViolation, IntegrityViolation):
    """A rule broken to hide work from the timer or the kernel count: the harness records `hack`."""


def _to_host(t) -> np.ndarray:
    import torch
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: the raw bits travel as uint16
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def _to_torch(host: np.ndarray, device: str):
    import torch
    if host.dtype == np.uint16:
        t = torch.from_numpy(host.view(np.int16)).view(torch.bfloat16)
    elif host.dtype in (np.float32, np.float64, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_):
        t = torch.from_numpy(host)
    else:
        raise RuleViolation(f"returned an array of dtype {host.dtype}, which has no torch counterpart here")
    return t.to(device)


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
                host = _to_host(v)
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
        return tuple(_to_torch(_read(self.rt, o), self.rt.torch_device) for o in outs)

    def __call__(self, *inputs):
        args, hosts = self.upload(inputs)
        with watching() as w:
            out = self.launch(args)
        problem = watch_intact()
        if problem:
            raise Cheat(problem)
        if w.other_queue:
            raise Cheat(f"{w.other_queue} kernel launch(es) on a queue other than the one passed in: "
                                "invisible to the timer's profiling events")
        # With none of its own launches the harness judges the call a decoy (when it is right).
        if w.own and (w.library or w.readbacks):
            what = [f"pyopencl's own kernel '{n}' (pyopencl.array arithmetic or a library kernel)" for n in dict.fromkeys(w.library)]
            what += list(dict.fromkeys(w.readbacks))
            raise Cheat("kernel_function must compute in kernels from OPENCL_SOURCE on the device, but it ran "
                                + "; ".join(what))
        outs = self.outputs(out)
        for i, (a, host) in enumerate(zip(args, hosts)):
            if host is not None and _read(self.rt, a).tobytes() != host.tobytes():
                raise RuleViolation(f"kernel_function modified input[{i}] on the device")
        result = self.download(outs)
        return result[0] if len(result) == 1 and not isinstance(out, (tuple, list)) else result
