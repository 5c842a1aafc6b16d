"""Pallas backend: JAX Pallas kernels, through the Triton lowering on NVIDIA (and AMD) GPUs and
through the Pallas interpreter on a CPU. The worker-side pieces live in ``runtime`` (JAX set-up,
DLPack, launch counting), ``timing`` and ``static``; this module is what the parent imports, and
it imports no JAX."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

from mkbench.backend import Backend, LaunchCounter
from mkbench.candidate import ENTRY_POINT, static_entry_problem
from mkbench.errors import Unavailable
from mkbench.hookspecs import hookimpl

from . import runtime


def _jax_gpu_plugin(kind: str) -> bool:
    """Whether a JAX GPU runtime for ``kind`` ("cuda" / "rocm") is installed, read from package
    metadata so that nothing is imported and no device is touched in the parent."""
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name.startswith(f"jax-{kind}"):  # jax-cuda13-plugin / -pjrt, jax-rocm7-plugin ...
            return True
        if name == "jaxlib" and kind in (dist.version or ""):  # old monolithic jaxlib+cuda wheels
            return True
    return False


class PallasBackend(Backend):
    name = "pallas"
    language = "pallas (jax)"
    suffix = ".py"
    candidate_contract = (
        f"One Python file per task at <category>/<task>.py defining a top-level callable `{ENTRY_POINT}` "
        "(or one named after the task). It is called with the task's inputs as positional arguments: tensors "
        "as JAX arrays on the device, handed over through DLPack without a copy (JAX runs with x64 enabled, so "
        "int64 stays int64), and Python scalars as they are. It launches Pallas kernels with "
        "`jax.experimental.pallas.pallas_call` (a grid and BlockSpecs; on NVIDIA GPUs through the Triton "
        "lowering: pass `compiler_params=jax.experimental.pallas.triton.CompilerParams(...)`, keep every loaded "
        "tile a power of two and mask partial tiles with `jax.experimental.pallas.triton.load/store(mask=...)`) "
        "and returns the output JAX array, or a tuple of them in the reference's order, with the reference's "
        "shapes and dtypes; the backend hands them back to torch through DLPack. Write plain Pallas and do not "
        "pass `interpret`: on a CPU the backend makes every pallas_call interpret, so the same file runs on both. "
        "The entry point must be traceable by JAX with the Python scalars static (the launch counter traces it). "
        "Host code may allocate, reshape, cast, pad and slice; computing the result with jax.numpy / jax.lax "
        "outside a kernel is not allowed."
    )

    # --- parent side ---------------------------------------------------------------------
    def availability(self, hw):
        if importlib.util.find_spec("jax") is None or importlib.util.find_spec("jaxlib") is None:
            raise Unavailable("the jax package is not installed (pip install 'mkbench[pallas]')")
        if hw.device == "cpu":
            return
        if hw.device == "cuda":
            kind = "rocm" if hw.vendor == "amd" else "cuda"
            if not _jax_gpu_plugin(kind):
                raise Unavailable(f"jax is installed without a {kind.upper()} runtime (pip install 'jax[{kind}13]' or "
                                  f"the matching {kind} extra): Pallas would have no GPU to lower to")
            return
        if hw.device == "tpu":
            raise Unavailable("the worker builds every input as a torch tensor on the profile's device and "
                              "torch has no TPU device: Pallas on TPU (Mosaic) needs a JAX-native input path, "
                              "which is not written")
        raise Unavailable(f"Pallas runs here through JAX on NVIDIA or AMD GPUs (Triton lowering) or on a CPU "
                          f"(interpreter), not on {hw.device} ({hw.vendor})")

    stream_timed = False  # JAX runs on its own stream and is timed by a device-wide sync
    worker_modules = ("jax",)

    def worker_env(self, hw):
        return runtime.env_for(hw.device, hw.vendor)

    def own_kernel_names(self, task, source):
        # A lowered Pallas kernel carries the name of the Python function it was given; every function
        # the candidate defines is a candidate name, since XLA's own fusions carry generated names.
        import ast
        try:
            tree = ast.parse(Path(source).read_text())
        except SyntaxError:
            return None
        return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def interpreted(self, hw):
        return hw.device == "cpu"

    def reference_dir(self):
        return Path(__file__).parent / "kernels"

    def static_problem(self, task, source):
        return static_entry_problem(source, task.name)

    def static_findings(self, task, source):
        from .static import scan_pallas
        return scan_pallas(Path(source).read_text(), str(source))

    # --- worker side ---------------------------------------------------------------------
    def compile_checks(self, task, source, hw):
        # On a CPU the kernels only meet the interpreter, which accepts what the Triton lowering
        # rejects; lowering them for CUDA here (no GPU needed, nothing compiled to PTX) reports it.
        if hw.device != "cpu" or source is None:
            return {}
        return {"pallas->triton lowering (cuda)": runtime.lower_for_cuda(task, Path(source), hw.skip_shape_roles)}

    def compile(self, task, source, hw):
        return runtime.load(task.name, source, hw.device)

    def launch_counter(self):
        return PallasLaunchCounter()

    def is_compile_error(self, exc):
        return runtime.is_compile_failure(exc)

    def prepare_call(self, inputs):
        if not runtime.INTERPRET:  # the interpreter's outputs are fresh host arrays
            runtime.poison_jax_allocator(inputs)

    def run(self, fn, inputs):
        if not isinstance(fn, runtime.Candidate):
            fn = runtime.Candidate(fn, None, interpret=runtime.INTERPRET)
        return runtime.call(fn, inputs)

    def time(self, fn, arg_sets, hw, settings):
        from .timing import time_candidate
        call = fn.fn if isinstance(fn, runtime.Candidate) else fn
        return time_candidate(call, arg_sets, hw.device, hw.l2_cache_mb, settings, interpreted=self.interpreted(hw))


class PallasLaunchCounter(LaunchCounter):
    """Counts the Pallas kernels of the calls run inside the block: ``runtime.call`` traces each
    call and adds the live ``pallas_call`` sites of its program (see ``runtime.count_kernels``)."""

    def __enter__(self):
        self.count = 0
        self._outer = runtime.Counter.active
        runtime.Counter.active = self
        return self

    def __exit__(self, *exc):
        runtime.Counter.active = self._outer


@hookimpl
def register_backends(register):
    register(PallasBackend())
