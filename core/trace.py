"""Device-side evidence: which kernels a candidate's call really ran, on which streams, for how long.

In the worker, a tracer records one or more candidate calls:

* on CUDA, a Kineto/CUPTI trace (``torch.profiler``) of every kernel, memcpy and memset the process
  launched, on every stream, each call bracketed by two marker kernels (``torch.cuda._sleep``) on the
  stream the timer's events use;
* on the CPU, the ATen ops dispatched during the call (a ``TorchDispatchMode``) outside the
  backend's own kernel launches, with the bytes each touched, and the launches themselves as the
  backend's launch counter logged them.

The summary is plain data sent to the orchestrator, which reads it with :func:`analyze`:

* ``framework_share``: the share of the call's work done by kernels not built from the candidate's
  source (ATen, cuBLAS, cuDNN, XLA, Inductor): device time on a GPU, tensor bytes on the CPU (whose
  "device" is the Triton interpreter, whose times say nothing). Allocation fills and memsets
  (``torch.zeros``) count for neither side.
* hidden work: kernels that ended after the timed stream's end marker started (the events could not
  see them), or that were launched after the call returned (a thread; not said of a trace cut at
  ``MAX_EVENTS``, which ends inside a call). No wall-clock slack: it
  reads the GPU's own timestamps, so a GPU shared with other processes cannot trigger it. Only the
  GPU's own record's precision is allowed for (``HIDDEN_SLACK_US``, and never more than a tenth of
  the call's device time).
* the device time per call (the union of kernel intervals), to cross-check the timer's numbers:
  only from a trace taken with the device to itself (``alone``), since kernels that share the SMs
  with other lanes' work run several times longer than the same kernels timed alone.
"""

from __future__ import annotations

import heapq
import re
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

#: device events kept per trace, the first launched: a candidate launching millions of kernels gets a
#: truncated trace. 5000 cut the traces of CUDA-L1 models that launch hundreds of kernels a call (three
#: calls traced) inside their last call, whose kernels then read as launched after the call returned.
MAX_EVENTS = 20000
MARKER = "spin_kernel"  # torch.cuda._sleep's kernel
START_MARKER_US = 1000.0
#: how far past the end marker's start a kernel on another stream may end before it counts as hidden
#: work: at most this many microseconds, and at most this share of the call's device time. CUPTI's
#: record of a kernel that a CUDA graph replays on its internal stream ended 2.0 us after the timed
#: stream's next kernel started (CUDA-L1 kb_l2_59, cuda_graph variant, on an H100), although the
#: graph's launch orders it before. Unordered work that small cannot move the call's time by more
#: than the share.
HIDDEN_SLACK_US, HIDDEN_SLACK_SHARE = 5.0, 0.10
# Memory operations, not kernels: fills and memsets (torch.zeros), and copies made by the runtime (DLPack
# hand-overs, constants sent to the device). Counted for neither side of the framework share.
ALLOC_PATTERNS = ("Memset", "Memcpy", "FillFunctor", "fill_kernel", "zero_")


# --- kernel names -------------------------------------------------------------------------------

def _demangle_first(name: str) -> str:
    """The function identifier of an Itanium-mangled name (``_Z10my_kernelPfS_i`` -> ``my_kernel``;
    nested ``_ZN2ns6kernelEv`` -> ``kernel``); other names are returned unchanged."""
    if not name.startswith("_Z"):
        return name
    rest = name[2:]
    nested = rest.startswith("N")
    if nested:
        rest = rest[1:]
    last = name
    while rest and rest[0].isdigit():
        m = re.match(r"(\d+)", rest)
        n = int(m.group(1))
        ident = rest[len(m.group(1)):len(m.group(1)) + n]
        last, rest = ident, rest[len(m.group(1)) + n:]
        if not nested:
            break
    return last


def kernel_identifier(name: str) -> str:
    """The bare function name of a kernel as a profiler lists it: ``void ns::k<4, T>(float*, int)``
    -> ``k``; a mangled name is demangled as far as its identifier."""
    s = _demangle_first(name.strip())
    s = re.sub(r"^(void|auto)\s+", "", s)
    # the one parenthesis before the parameter list: a kernel in an unnamed namespace (as C++ candidates
    # and PyTorch's softmax and depthwise kernels are) was cut there and had no name at all
    s = s.replace("(anonymous namespace)::", "")
    # cut the parameter list and template arguments (balanced, from the left)
    out, depth = [], 0
    for ch in s:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif ch == "(" and depth == 0:
            break
        elif depth == 0:
            out.append(ch)
    s = "".join(out).strip()
    return s.split("::")[-1].strip()


def global_function_names(source: str) -> set[str]:
    """Names of ``__global__`` functions (CUDA, HIP) and ``__kernel`` functions (OpenCL C) in ``source``."""
    found = set(re.findall(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:static\s+)?(?:inline\s+)?"
                           r"void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(", source))
    found |= set(re.findall(r"(?:__kernel|kernel)\s+void\s+(?:__attribute__\s*\(\([^)]*\)\)\s*)?(\w+)\s*\(", source))
    return found


# --- recording (worker side) ----------------------------------------------------------------------

def first_launched(events, cap: int) -> list:
    """The ``cap`` events launched first (by correlation id, the launch order), in that order. A trace
    cut in the profiler's own order kept a call's start marker and lost its end marker and later
    kernels at random; cut in launch order, it holds whole calls and then part of one, and the reader
    (:func:`_analyze_device`) knows where the whole ones end."""
    return heapq.nsmallest(cap, events, key=lambda ev: ev[4])


class DeviceTracer:
    """Kineto/CUPTI trace of candidate calls on CUDA; use ``with tracer.call():`` around each call."""

    basis = "device_time"

    def __init__(self):
        self.calls = 0
        self._prof = None

    def __enter__(self):
        import torch
        from torch.profiler import ProfilerActivity, profile

        from .timing import _spin_rate
        self._cycles = int(START_MARKER_US * _spin_rate())  # measured outside the trace: it launches spins
        torch.cuda.synchronize()
        t = time.perf_counter()
        self._prof = profile(activities=[ProfilerActivity.CUDA])
        self._prof.__enter__()
        self._cost = {"start_s": time.perf_counter() - t}
        self._entered = time.perf_counter()
        return self

    @contextmanager
    def call(self):
        import torch
        # Start marker on the timed (current) stream, a millisecond long: work the candidate puts on
        # another stream without first waiting for this one starts while it spins, which is
        # before the timer's start event could see it (deterministic, not a race on a short kernel).
        torch.cuda._sleep(self._cycles)
        yield
        torch.cuda._sleep(1)  # end marker: everything the events could see ran before it
        self.calls += 1

    def __exit__(self, *exc):
        import torch
        torch.cuda.synchronize()
        t = time.perf_counter()
        self._cost["traced_s"] = t - self._entered
        self._prof.__exit__(*exc)
        self._cost["stop_s"] = time.perf_counter() - t
        return False

    def summary(self) -> dict[str, Any]:
        t = time.perf_counter()
        seen, on_device = 0, 0

        def device_events():
            nonlocal seen, on_device
            for e in self._prof.profiler.kineto_results.events():
                seen += 1
                if e.device_type().name == "CUDA":
                    on_device += 1
                    yield [e.name()[:300], int(e.device_resource_id()), int(e.start_ns()), int(e.duration_ns()),
                           int(e.correlation_id())]

        events = first_launched(device_events(), MAX_EVENTS)
        # where a trace's seconds go, in the unit's log: the profiler's start and stop, the traced
        # calls themselves, reading the events back (the trace is the costliest step of a unit)
        cost = dict(self._cost, read_s=time.perf_counter() - t)
        print("trace cost: " + ", ".join(f"{k} {v:.3f}" for k, v in cost.items()) +
              f", {seen} events read, {on_device} on the device ({len(events)} kept), {self.calls} call(s)",
              file=sys.stderr, flush=True)
        return {"basis": self.basis, "calls": self.calls, "events": events, "truncated": on_device > len(events),
                "cost": {k: round(v, 4) for k, v in cost.items() if k != "traced_s"}}


_ALLOC_OPS = {"empty", "empty_strided", "empty_like", "zeros", "zeros_like", "zero_", "fill_", "ones", "ones_like",
              "full", "full_like", "new_empty", "new_empty_strided", "new_zeros", "arange", "lift_fresh",
              "scalar_tensor",
              "set_", "resize_", "detach", "alias"}


class HostTracer:
    """On the CPU: ATen ops dispatched during candidate calls, outside the backend's own launches
    (which the launch counter logs with the tensor bytes they were given)."""

    basis = "tensor_bytes"

    def __init__(self, counter):
        self.counter = counter
        self.calls = 0
        self.ops: list[list] = []
        self._mode = None
        self._first_launch = len(getattr(counter, "log", []))

    def __enter__(self):
        from torch.utils._python_dispatch import TorchDispatchMode
        tracer = self

        class _Record(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                if not getattr(tracer.counter, "inside", False) and len(tracer.ops) < MAX_EVENTS:
                    tracer.record(func, args, out)
                return out

        self._mode = _Record()
        self._mode.__enter__()
        return self

    def record(self, func, args, out) -> None:
        import torch
        from torch.utils._pytree import tree_flatten
        packet = func._overloadpacket
        name = getattr(packet, "__name__", str(func)).split(".")[-1]
        if name in _ALLOC_OPS or _is_view(func):
            return
        tensors = [t for t in tree_flatten((args, out))[0] if isinstance(t, torch.Tensor)]
        self.ops.append([f"aten::{name}", sum(t.numel() * t.element_size() for t in tensors)])

    @contextmanager
    def call(self):
        yield
        self.calls += 1

    def __exit__(self, *exc):
        self._mode.__exit__(*exc)
        return False

    def summary(self) -> dict[str, Any]:
        launches = [[e["name"], e["bytes"]] for e in getattr(self.counter, "log", [])[self._first_launch:]]
        return {"basis": self.basis, "calls": self.calls, "framework_ops": self.ops, "own_launches": launches,
                "launch_log": hasattr(self.counter, "log")}


def _is_view(func) -> bool:
    try:
        return bool(func._schema.returns) and all(r.alias_info is not None and not r.alias_info.is_write
                                                  for r in func._schema.returns)
    except AttributeError:
        return False


class NoTracer:
    basis = None

    def __enter__(self):
        return self

    @contextmanager
    def call(self):
        yield

    def __exit__(self, *exc):
        return False

    def summary(self):
        return None


def warm_up(device: str) -> None:
    """One empty trace: a process's first profiler session starts CUPTI and measures the marker
    kernel's clock, which the first traced call would otherwise pay for while it holds the device."""
    if device == "cuda":
        with DeviceTracer() as tracer:
            with tracer.call():
                pass


def make_tracer(device: str, counter, enabled: bool = True):
    if not enabled:
        return NoTracer()
    if device == "cuda":
        return DeviceTracer()
    if device == "cpu" and hasattr(counter, "log"):
        # only for backends whose launches are logged (Triton): for the others the ATen ops seen on
        # the CPU are the harness's own hand-overs (DLPack, host copies), not framework work
        return HostTracer(counter)
    return NoTracer()


# --- reading (orchestrator side) ------------------------------------------------------------------

@dataclass
class TraceFindings:
    basis: str | None
    framework_share: float | None = None  # None: not measurable (no own-kernel names, no launch log)
    own: float = 0.0                      # ns or bytes, per the basis
    framework: float = 0.0
    alloc: float = 0.0
    own_kernels: list[str] = field(default_factory=list)
    framework_kernels: list[str] = field(default_factory=list)  # the biggest first
    hidden: list[str] = field(default_factory=list)             # why work escaped the timer
    busy_us_per_call: float | None = None
    #: traced with the device to itself (the orchestrator says so, from the lock it held): only then
    #: are its kernel durations comparable with the timer's, which are taken alone
    alone: bool = False
    #: the trace kept only the first ``MAX_EVENTS`` events: the calls it holds whole were read, and
    #: nothing can be said of launches after the last call returned
    truncated: bool = False

    def as_extra(self) -> dict[str, Any]:
        extra = {"framework_share": self.framework_share, "framework_share_basis": self.basis,
                 "own_kernels": self.own_kernels[:8], "framework_kernels": self.framework_kernels[:8],
                 "trace_busy_us_per_call": self.busy_us_per_call}
        if self.truncated:
            extra["trace_truncated"] = True
        return extra


def classify(name: str, own_names: set[str] | None) -> str:
    if MARKER in name:
        return "marker"
    if any(p in name for p in ALLOC_PATTERNS):
        return "alloc"
    if own_names is not None and kernel_identifier(name) in own_names:
        return "own"
    return "framework"


def analyze(summary: dict | None, own_names: set[str] | None, stream_timed: bool = True) -> TraceFindings | None:
    """What a trace shows. ``stream_timed``: the backend's timer reads events on torch's current stream
    (work elsewhere escapes it); backends timed by a device-wide sync (JAX's, OpenCL's queues) run on
    streams of their own by design, so no stream is "hidden" for them."""
    if not summary:
        return None
    if summary.get("basis") == "device_time":
        f = _analyze_device(summary, own_names)
        f.alone = summary.get("alone") is True
        if not stream_timed:
            f.hidden = [h for h in f.hidden if "launched after the call had returned" in h]
        return f
    if summary.get("basis") == "tensor_bytes":
        return _analyze_host(summary)
    return None


def _share(own: float, framework: float) -> float | None:
    total = own + framework
    return framework / total if total > 0 else None


def _analyze_device(summary: dict, own_names: set[str] | None) -> TraceFindings:
    f = TraceFindings(basis="device_time")
    events = summary["events"]
    markers = [ev for ev in events if MARKER in ev[0]]
    timed_stream = markers[0][1] if markers else None
    per_name: dict[str, float] = {}
    # calls: (start marker, end marker) pairs in launch order
    spans = [(markers[i], markers[i + 1]) for i in range(0, len(markers) - 1, 2)]
    busy = []
    for start, end in spans:
        inside = [ev for ev in events if start[4] < ev[4] < end[4]]
        intervals = sorted((ev[2], ev[2] + ev[3]) for ev in inside if classify(ev[0], own_names) != "marker")
        covered, cur_s, cur_e = 0, None, None
        for s, e in intervals:
            if cur_e is None or s > cur_e:
                if cur_e is not None:
                    covered += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        if cur_e is not None:
            covered += cur_e - cur_s
        busy.append(covered / 1000.0)
        slack_ns = min(HIDDEN_SLACK_US * 1000.0, HIDDEN_SLACK_SHARE * covered)
        for ev in inside:
            if ev[1] != timed_stream and ev[2] < start[2] + start[3]:
                f.hidden.append(f"kernel {kernel_identifier(ev[0])} on stream {ev[1]} started while the timed stream "
                                f"(stream {timed_stream}) was still before the call: work not ordered after the "
                                "timer's start")
            if ev[2] + ev[3] > end[2] + slack_ns and ev[1] != timed_stream:
                f.hidden.append(f"kernel {kernel_identifier(ev[0])} on stream {ev[1]} ended "
                                f"{(ev[2] + ev[3] - end[2]) / 1000:.1f} us after the timed stream's work "
                                f"(stream {timed_stream}) was done")
    f.truncated = bool(summary.get("truncated"))
    # A truncated trace ends inside a call whose end marker it lost: its kernels come after the last
    # whole call's end marker without having been launched after any call returned.
    if spans and not f.truncated:
        last_end = spans[-1][1][4]
        for ev in events:
            if ev[4] > last_end and MARKER not in ev[0]:
                f.hidden.append(f"kernel {kernel_identifier(ev[0])} was launched after the call had returned")
                break
    for ev in events:
        kind = classify(ev[0], own_names)
        if kind == "marker":
            continue
        if spans and not any(s[4] < ev[4] < e[4] for s, e in spans):
            continue  # the allocator's poison fill before the call, and the like
        if kind == "alloc":
            f.alloc += ev[3]
        elif kind == "own":
            f.own += ev[3]
            f.own_kernels.append(kernel_identifier(ev[0]))
        else:
            f.framework += ev[3]
            per_name[ev[0]] = per_name.get(ev[0], 0.0) + ev[3]
    f.own_kernels = sorted(set(f.own_kernels))
    calls = max(len(spans), 1)
    f.framework_kernels = [f"{kernel_identifier(n)} ({t / 1000 / calls:.1f} us/call)" for n,
                           t in sorted(per_name.items(), key=lambda kv: -kv[1])]
    f.framework_share = _share(f.own, f.framework) if own_names is not None else None
    f.busy_us_per_call = sorted(busy)[len(busy) // 2] if busy else None
    f.hidden = f.hidden[:3]
    return f


def _analyze_host(summary: dict) -> TraceFindings:
    f = TraceFindings(basis="tensor_bytes")
    per_name: dict[str, float] = {}
    for name, nbytes in summary.get("framework_ops", []):
        # copies count too: a candidate's .contiguous() or .to() is the framework's work, not its kernel's
        f.framework += nbytes
        per_name[name] = per_name.get(name, 0.0) + nbytes
    for name, nbytes in summary.get("own_launches", []):
        f.own += nbytes
        f.own_kernels.append(name)
    f.own_kernels = sorted(set(f.own_kernels))
    calls = max(summary.get("calls") or 1, 1)
    f.framework_kernels = [f"{n} ({b / 2**10 / calls:.0f} KiB/call)" for n,
                           b in sorted(per_name.items(), key=lambda kv: -kv[1])]
    if summary.get("launch_log"):
        f.framework_share = _share(f.own, f.framework)
    return f


def jit_function_names(source: str) -> set[str]:
    """Names of the ``@triton.jit`` (``autotune``, ``heuristics``) functions a Python source defines:
    a compiled Triton kernel carries its function's name in the profiler."""
    import ast
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                attr = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if attr in ("jit", "autotune", "heuristics"):
                    names.add(node.name)
    return names
