"""What the two execution paths of the sycl backend share (``opencl/``: pyopencl on an OpenCL
device; ``dpctl/``: a SYCL queue behind the pyopencl facade): the watch that counts a call's kernel
launches and readbacks, the errors a broken rule raises, build logs rewritten to candidate lines,
the host copies that carry tensors across the boundary, and the timing protocol's pieces (the cache
flush, the sampling loop, the brackets around a call). Nothing here imports pyopencl or dpctl, so
either path can use it without loading the other's runtime; ``paths`` holds the interface both
paths implement.
"""

from __future__ import annotations

import ast
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from mkbench.errors import CompileError, IntegrityViolation
from mkbench.timing import Samples, TimingSettings, _keep_going

if TYPE_CHECKING:
    from .paths import PathRuntime


# --- the watch -------------------------------------------------------------------------

@dataclass
class Watch:
    """What happened on the device side while the watch was open."""

    own: int = 0                                         # launches of kernels built from OPENCL_SOURCE
    library: list[str] = field(default_factory=list)     # other kernels, e.g. pyopencl.array arithmetic
    readbacks: list[str] = field(default_factory=list)   # device -> host transfers and maps
    other_queue: int = 0                                 # launches on a queue the timer does not see


# The watches open now; each path's launch and readback hooks record into all of them.
OPEN: list[Watch] = []


class watching:
    """Context manager: a :class:`Watch` that records everything enqueued inside it (nests)."""

    def __enter__(self) -> Watch:
        self.watch = Watch()
        OPEN.append(self.watch)
        return self.watch

    def __exit__(self, *exc) -> None:
        # by identity: two watches with the same counts are equal as dataclasses
        OPEN[:] = [w for w in OPEN if w is not self.watch]


class RuleViolation(RuntimeError):
    """The candidate did something the contract forbids; the message says what."""


class Cheat(RuleViolation, IntegrityViolation):
    """A rule broken to hide work from the timer or the kernel count: the harness records `hack`."""


def call_problem(w: Watch) -> str | None:
    """Why a call's watch shows a cheat (a hack), or None. A call with none of its own launches is
    left to the harness, which judges it a decoy when its answer is right."""
    if w.other_queue:
        return (f"{w.other_queue} kernel launch(es) on a queue other than the one passed in: "
                "invisible to the timer's profiling events")
    if w.own and (w.library or w.readbacks):
        what = [f"pyopencl's own kernel '{n}' (pyopencl.array arithmetic or a library kernel)"
                for n in dict.fromkeys(w.library)]
        what += list(dict.fromkeys(w.readbacks))
        return "kernel_function must compute in kernels from OPENCL_SOURCE on the device, but it ran " + "; ".join(what)
    return None


# --- build logs ----------------------------------------------------------------------------

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
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
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


def build_message(text: str, path: Path | None, first_line: int | None) -> str:
    """An OpenCL build log (pyopencl's error text) with kernel-source locations rewritten as
    ``file.py:line:col:``, its first error first."""
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


def build_error(log: str, path: Path | None) -> CompileError:
    """The compile error for a failed build of the candidate at ``path``: its build log, located."""
    return CompileError(build_message(log, path, source_first_line(path) if path else None))


def build_options(options) -> list[str]:
    """BUILD_OPTIONS as a list of flags (it may be one string)."""
    if isinstance(options, str):
        options = options.split()
    return [str(o) for o in (options or [])]


# --- torch <-> host arrays -------------------------------------------------------------------

def to_host(t) -> np.ndarray:
    """A tensor as a C-contiguous numpy array on the host; bfloat16 as its uint16 bit patterns."""
    import torch
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: the raw bits travel as uint16
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def to_torch(host: np.ndarray, device: str):
    import torch
    if host.dtype == np.uint16:
        t = torch.from_numpy(host.view(np.int16)).view(torch.bfloat16)
    elif host.dtype in (np.float32, np.float64, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_):
        t = torch.from_numpy(host)
    else:
        raise RuleViolation(f"returned an array of dtype {host.dtype}, which has no torch counterpart here")
    return t.to(device)


# --- timing ---------------------------------------------------------------------------------------

def flush_bytes(rt: PathRuntime, hw) -> int:
    """The cache flush before each timed call: twice the larger of the device's last-level cache
    and the profile's L2, at least 1 MiB, in whole 4-byte words."""
    cache = max(int(rt.device.global_mem_cache_size or 0), int(hw.l2_cache_mb * 2**20))
    return max(2 * cache, 2**20) // 4 * 4


def sample(one: Callable[[int], float], s: TimingSettings) -> list[float]:
    """``one(i)`` times the call on input set ``i`` (modulo the pool) in microseconds: warm-up
    calls for ``s.warmup_ms`` (at least two), then samples until ``mkbench.timing``'s rule stops."""
    t0, i = time.perf_counter(), 0
    while (time.perf_counter() - t0) * 1000 < s.warmup_ms or i < 2:
        one(i)
        i += 1
    samples = Samples()
    t0 = time.perf_counter()
    while _keep_going(samples, (time.perf_counter() - t0) * 1000, s):
        samples.append(one(len(samples)))
    return samples


# Two ways to bracket a call on the queue's profiling clock; the runtime supplies the events.

class MarkerBracket:
    """Markers (SYCL: barriers) before and after the call; elapsed = end marker's end - start
    marker's end. Only work enqueued between them lies in that span (in-order queue)."""

    def __init__(self, rt: PathRuntime):
        self.rt = rt

    def mark(self) -> Any:
        return self.rt.submit_marker()

    def elapsed_us(self, start, end) -> float:
        return (self.rt.end_ns(end) - self.rt.end_ns(start)) / 1e3


class KernelBracket:
    """Empty one-work-item kernels before and after, where markers carry no profiling times;
    elapsed = second's start - first's end."""

    def __init__(self, rt: PathRuntime):
        self.rt = rt

    def mark(self) -> Any:
        return self.rt.submit_timestamp()

    def elapsed_us(self, start, end) -> float:
        return (self.rt.start_ns(end) - self.rt.end_ns(start)) / 1e3


def make_bracket(rt: PathRuntime) -> MarkerBracket | KernelBracket:
    """Markers where the runtime gives them profiling times; otherwise empty kernels."""
    if rt.has_markers:
        bracket = MarkerBracket(rt)
        try:
            start, end = bracket.mark(), bracket.mark()
            rt.wait()
            if rt.end_ns(start) > 0 and rt.end_ns(end) >= rt.end_ns(start):
                return bracket
        except rt.profiling_errors:  # a marker without profiling data raises
            pass
    return KernelBracket(rt)
