"""Triton backend: real kernels on CUDA/ROCm GPUs, the Triton interpreter on a CPU."""

from __future__ import annotations

import functools
import importlib.util
import threading
from pathlib import Path

from mkbench.backend import Backend, LaunchCounter
from mkbench.candidate import ENTRY_POINT, load_python_candidate, static_entry_problem
from mkbench.errors import CompileError, Unavailable
from mkbench.hookspecs import hookimpl


class TritonBackend(Backend):
    name = "triton"
    language = "triton"
    suffix = ".py"
    candidate_contract = (
        f"One Python file per task at <category>/<task>.py defining a top-level callable `{ENTRY_POINT}` "
        "(or one named after the task), the KernelBench-X convention. It is called with the task's inputs "
        "as positional arguments: torch tensors already on the device (CPU tensors under the interpreter) "
        "and Python scalars. It launches @triton.jit kernels and returns the output tensor, or a tuple of "
        "them in the reference's order, with the reference's shapes and dtypes; it must not modify its "
        "inputs. Allocation (torch.empty and friends) is allowed; computing the result with torch ops is not. "
        "Under the interpreter, a @triton.jit function reading a module global that is not a tl.constexpr "
        "is a compile error, as it is for the GPU compiler."
    )

    def availability(self, hw):
        if importlib.util.find_spec("triton") is None:
            raise Unavailable("the triton package is not installed")
        if hw.device == "cuda" and hw.vendor not in ("nvidia", "amd"):
            raise Unavailable(f"Triton targets NVIDIA and AMD GPUs, not {hw.vendor}")

    def worker_env(self, hw):
        # explicit both ways: a worker inherits its parent's environment, and an inherited
        # TRITON_INTERPRET=1 (a test session's, a user's shell) would run GPU kernels in the interpreter
        return {"TRITON_INTERPRET": "1" if hw.device == "cpu" else "0"}

    def interpreted(self, hw):
        return hw.device == "cpu"

    def reference_dir(self):
        return Path(__file__).parent / "kernels"

    def static_problem(self, task, source):
        return static_entry_problem(source, task.name)

    def static_findings(self, task, source):
        from mkbench.static_checks import scan_python
        return scan_python(Path(source).read_text(), str(source))

    can_suppress_launches = True

    def launch_counter(self, suppress=False):
        return TritonLaunchCounter(suppress)

    def prewarm(self, hw):
        # the interpreter compiles nothing
        return TritonCompileOnly() if hw.device == "cuda" else None

    def own_kernel_names(self, task, source):
        from mkbench.trace import jit_function_names
        return jit_function_names(Path(source).read_text())

    def compile(self, task, source, hw):
        if self.interpreted(hw):
            # The interpreter runs what the GPU compiler refuses; refuse it here too, so a CPU
            # verdict of "correct" still means "compiles for a GPU".
            from .gpu_rules import non_constexpr_globals
            problems = non_constexpr_globals(Path(source).read_text())
            if problems:
                raise CompileError(f"{Path(source).name}: " + "; ".join(problems))
        else:
            compile_as_host_work()
        return load_python_candidate(source, task.name)

    def is_compile_error(self, exc):
        try:
            from triton.compiler.errors import CompilationError
        except ImportError:  # pragma: no cover
            return False
        try:
            from triton.runtime.errors import OutOfResources
        except ImportError:  # pragma: no cover
            OutOfResources = ()
        if isinstance(exc, (CompilationError, OutOfResources)):
            return True
        # Triton's MLIR pipeline reports backend failures (e.g. a pass assertion) as RuntimeError.
        return isinstance(exc, RuntimeError) and "PassManager::run failed" in str(exc)


def compile_as_host_work() -> None:
    """From now on in this worker, each Triton compile inside a candidate's call is host work
    (:func:`mkbench.worker.host_work`): with ``--build-hold release`` the lane lets go of its shared hold on
    the device while Triton builds the kernel, so a timing phase need not wait for the build. A generated
    kernel that no compile-ahead call can build compiles (and autotunes) in its first call: on one H200 a
    KernelBench-X candidate's first call took 3.0 s on average and up to 32 s, under the hold, while timing
    phases waited for it (61 s of phases deferred in a 157 s run, reports/2026-11-28-corpus-scaling, call
    45). Triton's JIT takes ``triton.compiler.compile`` when it first binds a kernel to a device, so the
    wrapper set here (before the candidate's module runs) is what its kernels call. A compile launches
    nothing on the device, and a worker stepped out is stopped while a timing phase is open. A compile from
    another thread (Triton's asynchronous mode) stays under the hold: the lane's pipe is the main thread's."""
    import triton.compiler as compiler
    original = compiler.compile
    if getattr(original, "mkbench_host_work", False):
        return

    @functools.wraps(original)
    def compile(src, *args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            return original(src, *args, **kwargs)
        from mkbench.worker import host_work
        fn = getattr(src, "fn", None)
        with host_work(f"triton compile {getattr(fn, '__name__', None) or type(src).__name__}"):
            return original(src, *args, **kwargs)

    compile.mkbench_host_work = True
    compiler.compile = compile


class TritonLaunchCounter(LaunchCounter):
    """Counts launches of @triton.jit kernels (compiled or interpreted) by wrapping the two launch
    entry points for the duration of the block; logs each launch's kernel name and the bytes of the
    tensors it was given (the CPU trace's own-kernel side); with ``suppress`` it counts and logs but
    does not launch (the decoy check)."""

    def __init__(self, suppress: bool = False):
        self.suppress = suppress
        self.log: list[dict] = []

    def __enter__(self):
        from triton.runtime.jit import JITFunction
        self.count = 0
        self._patched = [(JITFunction, "run", JITFunction.run)]
        try:
            from triton.runtime.interpreter import InterpretedFunction
            self._patched.append((InterpretedFunction, "run", InterpretedFunction.run))
        except ImportError:  # pragma: no cover - older Triton
            pass
        for owner, attr, original in self._patched:
            setattr(owner, attr, self._counting(original))
        return self

    def _counting(self, original):
        counter = self

        def run(fn, *args, **kwargs):
            import torch
            counter.count += 1
            name = getattr(getattr(fn, "fn", None), "__name__", None) or getattr(fn, "__name__", "?")
            counter.log.append({"name": name,
                                "bytes": sum(a.numel() * a.element_size() for a in args
                                             if isinstance(a, torch.Tensor))})
            if counter.suppress:
                return None
            counter.inside = True
            try:
                return original(fn, *args, **kwargs)
            finally:
                counter.inside = False
        return run

    def __exit__(self, *exc):
        for owner, attr, original in self._patched:
            setattr(owner, attr, original)


class TritonCompileOnly:
    """Inside the block, a launch of a @triton.jit kernel compiles it (into TRITON_CACHE_DIR) and
    returns without launching (Triton's own ``warmup``), and an autotuned kernel compiles every
    configuration instead of benchmarking them (its choice is made later, in the real run)."""

    def __enter__(self):
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction
        self._patched = [(JITFunction, "run", JITFunction.run), (Autotuner, "run", Autotuner.run)]
        jit_run = JITFunction.run

        def compile_only(fn, *args, **kwargs):
            kwargs["warmup"] = True
            return jit_run(fn, *args, **kwargs)

        def compile_configs(tuner, *args, **kwargs):
            kwargs.pop("warmup", None)
            return tuner.warmup(*args, **kwargs)

        JITFunction.run, Autotuner.run = compile_only, compile_configs
        return self

    def __exit__(self, *exc):
        for owner, attr, original in self._patched:
            setattr(owner, attr, original)
        return False


@hookimpl
def register_backends(register):
    register(TritonBackend())
