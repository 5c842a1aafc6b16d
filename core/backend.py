"""The adapter contract every backend implements (built-in or third-party).

The core calls ``availability`` in the parent process; ``compile``, ``run`` and ``time`` run
inside an isolated worker. Subclass :class:`Backend` and register an instance through the
``register_backends`` hook.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .errors import Unavailable

if TYPE_CHECKING:
    from .hardware import HardwareProfile
    from .task import Task
    from .timing import Timing, TimingSettings


class Backend:
    name: str = ""
    language: str = ""
    #: file suffix of candidate sources, e.g. ".py"
    suffix: str = ".py"
    #: baselines (PyTorch eager, torch.compile) are timed for every task but are not candidates
    is_baseline: bool = False
    #: one paragraph: file layout, entry point, how inputs arrive, how outputs are returned
    candidate_contract: str = ""

    # --- parent side -------------------------------------------------------------------
    def availability(self, hw: "HardwareProfile") -> None:
        """Raise :class:`Unavailable` with a reason if this backend cannot run on ``hw``."""

    def worker_env(self, hw: "HardwareProfile") -> dict[str, str]:
        """Environment variables the worker must have before anything is imported."""
        return {}

    def compile_only(self, hw: "HardwareProfile") -> str | None:
        """Why candidates can be built here but not run (CUDA sources with nvcc on a machine with
        no NVIDIA GPU), or None. The pipeline then records compile verdicts only: correctness and
        timing are 'not_run' with this reason, and no baselines are timed."""
        return None

    def reference_dir(self) -> Path | None:
        """Folder of shipped reference kernels laid out as ``<category>/<task><suffix>``."""
        return None

    def interpreted(self, hw: "HardwareProfile") -> bool:
        """True when kernels run in an emulator: times are recorded but are not performance."""
        return False

    def unsupported(self, task: "Task", dtype: str) -> str | None:
        """Why this backend cannot express ``task`` at ``dtype`` (e.g. no bfloat16 type in its
        language), or None. Such combinations are recorded as skipped with the reason."""
        return None

    def static_problem(self, task: "Task", source: Path) -> str | None:
        """A one-line reason the candidate file cannot work, found without running it (parse
        errors, missing entry point), or None. Such candidates are recorded as compile errors."""
        return None

    # --- worker side -------------------------------------------------------------------
    def compile(self, task: "Task", source: Path | None, hw: "HardwareProfile") -> Callable[..., Any]:
        """Build the candidate; return a callable taking the task's inputs. Raise
        :class:`mkbench.errors.CompileError` with the compiler's message on failure."""
        raise NotImplementedError

    def compile_checks(self, task: "Task", source: Path | None, hw: "HardwareProfile") -> dict[str, dict]:
        """Further compile verdicts recorded apart from the one that gates the run, e.g. HIP built
        for AMD targets on an NVIDIA machine: ``{"hipcc --offload-arch=gfx90a": {"ok": bool,
        "message": str}}``. Runs in the worker before :meth:`compile`, whatever it returns."""
        return {}

    #: whether the timer reads CUDA events on torch's current stream (then a kernel on another stream,
    #: not ordered with it, is work hidden from the timer); False for backends timed by a device-wide
    #: sync that run on queues of their own (JAX, OpenCL)
    stream_timed: bool = True

    #: whether ``launch_counter(suppress=True)`` can skip the candidate's own kernel launches (still
    #: counting them): the decoy check runs the candidate so, and an answer that stays right without
    #: its own kernels was not computed by them
    can_suppress_launches: bool = False

    #: whether a worker makes torch's cuBLAS and cuDNN handles (one tiny matmul, one tiny convolution)
    #: before the candidate's first call. Candidates that call PyTorch's own ops inside a CUDA graph
    #: capture without a warm-up fail in a fresh process: making a handle is illegal while a stream
    #: captures. KernelBench's harness runs the reference in the candidate's process first, so those
    #: handles already exist there. On an H200, 5 of 5 of CUDA-L1's cuda_graph kernels that erred in
    #: mkbench ran once the handles existed (reports/2026-11-28-cuda-l1/call5-h200-probe).
    warm_libraries: bool = False

    def launch_counter(self, suppress: bool = False) -> "LaunchCounter":
        """A context manager counting this backend's kernel launches inside it (``count`` stays
        None where the backend cannot count). A correct answer with zero launches of the candidate's
        own kernels is not the backend's work (verdict ``framework``)."""
        return LaunchCounter()

    #: whether a worker that ran one unit of this (trusted baseline) backend may serve the next (the
    #: engine's :mod:`~mkbench.engine.kept`): its calls leave nothing behind that another task's unit could
    #: see. Never a candidate's backend: the engine keeps no candidate worker whatever this says
    reuse_worker: bool = False

    #: where the compile-ahead call (:meth:`prewarm`) runs by default: "pool" (the compile-ahead stage's
    #: own workers, before a lane takes the unit), "lane" (the unit's lane, before it holds any memory
    #: or lock: for builds that are most of a unit's lane time) or "off" (nowhere: the first call
    #: compiles). ``mkbench run --compile-ahead`` overrides
    compile_ahead: str = "pool"

    def prewarm(self, hw: "HardwareProfile") -> "AbstractContextManager | None":
        """A context manager inside which a call of the candidate compiles what its first real call
        would (JIT kernels, into the toolchain's on-disk cache) and runs nothing on the device; None
        where the backend cannot. The engine makes such a call on shape-only (``meta``) inputs, in a
        throwaway worker, outside every device lock: the worker that is then evaluated loads its
        kernels from the cache instead of compiling them while it holds the device, where the
        compile would keep the other lanes waiting. The context may have ``inputs(values)``: the
        shape-only inputs as the call should get them (the cuda backend's fake CUDA tensors)."""
        return None

    def own_kernel_names(self, task: "Task", source: Path) -> set[str] | None:
        """The kernel names a profiler shows for kernels built from this candidate's source (read
        statically, in the orchestrator): everything else in the device trace is framework or vendor
        work. None where the backend cannot tell (no framework share is then measured)."""
        return None

    def static_findings(self, task: "Task", source: Path) -> list:
        """Integrity findings from reading the candidate's source (see mkbench.static_checks)."""
        return []

    def is_compile_error(self, exc: BaseException) -> bool:
        """Whether an exception raised on the first call is a (JIT) compile failure."""
        return False

    def prepare_call(self, inputs: Sequence[Any]) -> None:
        """Harness work before a candidate call that must stay out of its trace (e.g. poisoning a
        framework allocator the candidate's outputs will come from)."""

    def build_failures(self) -> list[str]:
        """Builds the candidate asked for that failed and that it caught itself (a load_inline in a
        ``try/except`` with a framework fallback), one line each. Stored with the row, so a
        ``framework`` verdict can say that the candidate's own kernel never built."""
        return []

    def run(self, fn: Callable[..., Any], inputs: Sequence[Any]) -> Any:
        return fn(*inputs)

    def time(self, fn: Callable[..., Any], arg_sets: Sequence[Sequence[Any]], hw: "HardwareProfile",
             settings: "TimingSettings") -> "Timing":
        from .timing import time_callable
        return time_callable(lambda args: self.run(fn, args), arg_sets, hw, settings,
                             interpreted=self.interpreted(hw))


class LaunchCounter:
    """Counts nothing: ``count`` stays None. Backends that can count subclass it. A counter may also
    keep ``log`` (one ``{"name", "bytes"}`` per launch: the CPU trace's own-kernel side) and set
    ``inside`` while a launch runs (ops dispatched then are the launch's plumbing, not framework
    work)."""

    count: int | None = None
    inside: bool = False

    def __enter__(self) -> "LaunchCounter":
        return self

    def __exit__(self, *exc) -> None:
        return None


__all__ = ["Backend", "LaunchCounter", "Unavailable"]
