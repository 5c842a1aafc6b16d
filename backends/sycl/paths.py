"""The interface the sycl backend's two execution paths implement, and what is written once on it.

The paths: ``opencl/`` runs candidates through pyopencl on an OpenCL device, ``dpctl/`` through a
SYCL queue (dpctl) behind the pyopencl facade; ``device.execution_path`` decides which. Each path
has a runtime, one per worker and device, that satisfies :class:`PathRuntime`, and a candidate
class derived from :class:`PathCandidate`. Here: the runtime for a profile (:func:`runtime_for`),
the build of a candidate's source (:func:`build`) and the rules of a call, the same on both paths
(:meth:`PathCandidate.__call__`). Nothing here imports pyopencl or dpctl: a path's runtime is
imported when a worker first needs it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from mkbench.errors import CompileError
from mkbench.timing import Timing, TimingSettings

from .common import Cheat, RuleViolation, build_options, call_problem, to_host, to_torch, watching
from .device import execution_path


class PathRuntime(Protocol):
    """A worker's device, queue and compiler on one path, as the backend and the timer use it."""

    device: Any                  # the device's properties; global_mem_cache_size sizes the cache flush
    torch_device: str            # where outputs go back to as tensors
    has_markers: bool            # markers can be enqueued (their profiling times are checked apart)
    profiling_errors: tuple[type[Exception], ...]  # what enqueueing or reading a marker may raise

    def importing(self) -> AbstractContextManager:
        """Open while the candidate is imported: what its ``import pyopencl`` finds."""

    def build_program(self, source: str, flags: list[str], path: Path | None) -> Any:
        """``source`` built with ``flags``: the ``prog`` the entry point gets; CompileError if it fails."""

    def candidate(self, program: Any, entry: Callable) -> PathCandidate:
        """The callable the worker gets for ``entry`` and its built program."""

    def wait(self) -> None:
        """Block until everything enqueued on the queue has completed."""

    def submit_marker(self) -> Any:
        """Enqueue a marker (a barrier) on the queue; its event."""

    def submit_timestamp(self) -> Any:
        """Enqueue an empty one-work-item kernel on the queue; its event."""

    def start_ns(self, event: Any) -> int:
        """When ``event``'s command started, on the queue's profiling clock."""

    def end_ns(self, event: Any) -> int:
        """When ``event``'s command ended, on the queue's profiling clock."""


# --- the runtime for a profile --------------------------------------------------------------------

_runtimes: dict[tuple, PathRuntime] = {}


def runtime_for(hw) -> PathRuntime:
    """The worker's runtime for profile ``hw`` on the path ``execution_path`` gives, made once."""
    path = execution_path(hw)
    if path.sycl:
        key: tuple = ("sycl", path.sycl_device)
        if key not in _runtimes:
            from .dpctl.runtime import SyclRuntime
            _runtimes[key] = SyclRuntime(path.sycl_device)
    else:
        key = ("opencl", hw.device, hw.vendor)
        if key not in _runtimes:
            # importing the module installs its launch watch, before any candidate is imported
            from .opencl.runtime import OpenCLRuntime
            _runtimes[key] = OpenCLRuntime(hw)
    return _runtimes[key]


def build(rt: PathRuntime, source: Any, options: Any, path: Path | None) -> Any:
    """The candidate's OPENCL_SOURCE with its BUILD_OPTIONS (a list of flags or one string) built
    on ``rt``; CompileError, with the build log on the file's lines, when it does not build."""
    if not isinstance(source, str):
        raise CompileError(f"{path}: OPENCL_SOURCE must be a str, got {type(source).__name__}")
    return rt.build_program(source, build_options(options), path)


# --- the candidate ----------------------------------------------------------------------------------

class PathCandidate(ABC):
    """The callable the worker gets: torch inputs in, torch outputs out. ``upload``, ``launch`` and
    ``download`` are the three steps, apart, for the timer (only ``launch`` is timed). A call's
    rules are the same on both paths; a path says how arrays reach its device and come back."""

    on_sycl_queue = False  # True for the SYCL path's candidates

    def __init__(self, rt: PathRuntime, program: Any, queue: Any, entry: Callable):
        self.rt, self.program, self.entry = rt, program, entry
        self.queue = queue  # the queue argument the candidate launches on

    @abstractmethod
    def to_device(self, host: np.ndarray) -> Any:
        """A host array copied into a new array on the candidate's queue."""

    @abstractmethod
    def read(self, ary: Any) -> np.ndarray:
        """An array's contents on the host, read past the watch (not the candidate's readback)."""

    @abstractmethod
    def check_output(self, i: int, out: Any) -> None:
        """RuleViolation when output ``i`` is not an array this path can read back as the answer."""

    @abstractmethod
    def calling(self) -> AbstractContextManager:
        """Open around the candidate's enqueues in a call."""

    @abstractmethod
    def watch_intact(self) -> str | None:
        """Why launches can no longer be counted (the candidate replaced the path's hooks), or None."""

    @abstractmethod
    def time(self, arg_sets: Sequence[Sequence], hw, settings: TimingSettings) -> Timing:
        """The path's timer on these input sets."""

    def upload(self, inputs) -> tuple[tuple, tuple]:
        """Device arrays for the tensors (other inputs as they are), and the host copies they came from."""
        import torch
        args, hosts = [], []
        for v in inputs:
            if isinstance(v, torch.Tensor):
                host = to_host(v)
                args.append(self.to_device(host))
                hosts.append(host)
            else:
                args.append(v)
                hosts.append(None)
        return tuple(args), tuple(hosts)

    def launch(self, args: tuple):
        """The candidate's enqueues (inside ``calling`` where the path needs it)."""
        return self.entry(self.program, self.queue, *args)

    def outputs(self, out) -> tuple:
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        for i, o in enumerate(outs):
            self.check_output(i, o)
        return outs

    def download(self, outs: tuple) -> tuple:
        return tuple(to_torch(self.read(o), self.rt.torch_device) for o in outs)

    def __call__(self, *inputs):
        args, hosts = self.upload(inputs)
        with self.calling(), watching() as w:
            out = self.launch(args)
        problem = self.watch_intact()
        if problem:
            raise Cheat(problem)
        cheat = call_problem(w)
        if cheat:
            raise Cheat(cheat)
        outs = self.outputs(out)
        for i, (a, host) in enumerate(zip(args, hosts)):
            if host is not None and self.read(a).tobytes() != host.tobytes():
                raise RuleViolation(f"kernel_function modified input[{i}] on the device")
        result = self.download(outs)
        return result[0] if len(result) == 1 and not isinstance(out, (tuple, list)) else result
