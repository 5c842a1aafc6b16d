"""CUDA backend: raw ``__global__`` kernels compiled at run time, in the two forms generated-kernel
datasets use: CuPy/NVRTC modules driven from Python, and KernelBench's ``ModelNew`` built with
``torch.utils.cpp_extension.load_inline``. On a machine without an NVIDIA GPU it compiles every
CUDA source it can find statically with nvcc (compile-only mode); see docs/backends/cuda.md. What it
shares with the HIP backend (source finding, nvcc, launch counting, static checks) lives in
mkbench.backends.native; CuPy and load_inline are this backend's own."""

from __future__ import annotations

import importlib.util
import sys
from contextlib import contextmanager
from pathlib import Path

from mkbench.backend import Backend
from mkbench.backends.native import nvcc, sources
from mkbench.backends.native.launches import NativeLaunchCounter
from mkbench.backends.native.sources import entry_problem
from mkbench.candidate import ENTRY_POINT
from mkbench.errors import Unavailable
from mkbench.hookspecs import hookimpl

from .compile import compile_with_nvcc


class CudaBackend(Backend):
    name = "cuda"
    language = "cuda"
    suffix = ".py"
    # load_inline candidates (KernelBench's, CUDA-L1's) call PyTorch's own ops around their kernels,
    # some of them inside a CUDA graph captured at their first call
    warm_libraries = True
    candidate_contract = (
        "One Python file per task at <category>/<task>.py, in either of two forms. (a) CuPy/NVRTC: a top-level "
        f"`{ENTRY_POINT}` (or a callable named after the task) called with the task's inputs as positional "
        "arguments (torch CUDA tensors and Python scalars); it launches raw __global__ kernels built with "
        "cupy.RawModule(code=...) / cupy.RawKernel(code, name), passing tensors as t.data_ptr() (or "
        "cupy.from_dlpack(t)) and scalars as numpy scalars of the kernel's parameter types (a Python int is "
        "passed as int64, a float as double), and returns new torch tensors (one, or a tuple in the reference's "
        "order) with the reference's shapes and dtypes, never modifying its inputs. Kernels run on the current "
        "CuPy stream, which mkbench sets to torch's current stream around every call (passing "
        "stream=cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream) is also accepted). "
        "(b) KernelBench: a class ModelNew(torch.nn.Module) whose kernels are built with "
        "torch.utils.cpp_extension.load_inline(cuda_sources=..., cpp_sources=..., functions=[...]); mkbench "
        "builds ModelNew() once and calls forward(*inputs) (files from `mkbench import kernelbench` work as "
        "they are). Launches counted: cupy.RawKernel/RawModule kernels and calls of load_inline extension "
        "functions. Allocation (torch.empty...) is allowed; torch ops, CuPy array functions, ATen compute "
        "and vendor libraries (cuBLAS, cuDNN) for the computation are not. Without an NVIDIA GPU, CUDA source "
        "strings found statically (RawModule/RawKernel code, load_inline cuda_sources, top-level CUDA_SOURCE "
        "names; literals, top-level names or + of them) are compiled with nvcc for sm_90 and only compile "
        "verdicts are recorded."
    )

    # --- parent side -------------------------------------------------------------------
    def availability(self, hw):
        if hw.device == "cuda" and hw.vendor == "amd":
            raise Unavailable("CUDA kernels need an NVIDIA GPU; this is an AMD GPU (use --backend hip)")
        if hw.device == "cuda" and hw.vendor == "nvidia":
            if importlib.util.find_spec("cupy") is None and nvcc.find_nvcc() is None:
                raise Unavailable("neither CuPy (for NVRTC kernels) nor nvcc (for load_inline) is installed")
            return
        if nvcc.find_nvcc() is None:
            raise Unavailable(f"no NVIDIA GPU on profile {hw.name} and no nvcc to compile-check CUDA sources")

    def compile_only(self, hw):
        if hw.device == "cuda" and hw.vendor == "nvidia":
            return None
        return (f"no NVIDIA GPU on profile {hw.name}: CUDA sources were compiled with nvcc "
                f"-arch={nvcc.arch_for(hw)}, not run")

    def reference_dir(self):
        return Path(__file__).parent / "kernels"

    def static_problem(self, task, source):
        return entry_problem(source, task.name, allow_model_new=True)

    def static_findings(self, task, source):
        from mkbench.backends.native.checks import findings
        return findings(source, "cuda")

    # --- worker side -------------------------------------------------------------------
    def compile_checks(self, task, source, hw):
        """In compile-only mode: the CUDA strings the static scan could not resolve (not compiled)."""
        if not self.compile_only(hw):
            return {}
        try:
            found = sources.find(source, "cuda")
        except (SyntaxError, OSError, UnicodeDecodeError):
            return {}
        if not found.unresolved:
            return {}
        return {"static source scan": {"ok": False, "message": "not compiled here: " + "; ".join(found.unresolved)}}

    def compile(self, task, source, hw):
        if self.compile_only(hw):
            return compile_with_nvcc(source, nvcc.arch_for(hw))
        from . import runtime
        return runtime.load(task.name, source)

    worker_modules = ("cupy",)
    #: read by CuPy when imported (its kernel cache): set while the fork server imports it
    worker_import_env = ("CUPY_CACHE_DIR",)

    def build_failures(self):
        from . import runtime
        return runtime.build_failures()

    def own_kernel_names(self, task, source):
        from mkbench.backends.native.sources import kernel_names
        try:
            return kernel_names(Path(source))
        except (SyntaxError, OSError, UnicodeDecodeError):
            return None

    def launch_counter(self):
        """Counts RawKernel launches and load_inline extension calls made inside the block."""
        return NativeLaunchCounter()

    #: where the compile-ahead call runs (core.engine.compile_ahead.where): nowhere by default, until a
    #: GPU shows it pays. Measured on an H200 against the previous main, 30 CUDA-L1 tasks each
    #: (reports/2026-11-28-cuda-compile-ahead): in the lane on meta inputs, 5.78 against 4.83 s per
    #: kernel (call 21); on fake CUDA tensors, 4.42 against 4.33 (call 22), the lazy builds still in the
    #: first traced call both times (the models could not be moved to the fake device: fixed since, not
    #: measured). `--compile-ahead lane` runs it in the unit's own lane, before it holds anything (the
    #: pool, a quarter of the cores, queued CUDA-L1 units 48 s each when it took their imports: call 19)
    compile_ahead = "off"

    def prewarm(self, hw):
        # a load_inline extension built lazily, in the candidate's first forward, ran nvcc inside the
        # first traced call, while the device was held: 13 of 179 CUDA-L1 units took over 10 s there
        # (up to 38 s), and every timing phase waited for them (docs/engine.md)
        return None if self.compile_only(hw) else CudaCompileOnly()

    def is_compile_error(self, exc):
        from mkbench.backends.native import nvrtc
        if nvrtc.is_compile_error(exc):
            return True
        return isinstance(exc, RuntimeError) and "Error building extension" in str(exc)

    def run(self, fn, inputs):
        if "cupy" not in sys.modules:  # a load_inline candidate: its kernels use torch's stream API
            return fn(*inputs)
        from . import runtime
        with runtime.torch_stream():
            return fn(*inputs)


class CudaCompileOnly:
    """The prewarm context: a call inside it builds the candidate's extensions and kernels and
    launches none (``runtime.compile_only``), on fake CUDA tensors (torch's ``FakeTensorMode``: shapes,
    dtypes and a CUDA device, no memory; every torch op computes shapes only). Shape-only ``meta``
    inputs were not enough: CUDA-L1's candidates check ``x.is_cuda`` before they build, and fell back to
    PyTorch on them (an A/B on an H200 built nothing of kb_l2_43's 33 s: reports/2026-11-28-cuda-compile-ahead)."""

    def __enter__(self):
        import torch
        from torch._subclasses.fake_tensor import FakeTensorMode

        from . import runtime
        # The RNG states and the like that a candidate's construction reads stay real. A model is made
        # on the fake CUDA device and is not moved: moving a fake CPU model there failed on an H200
        # ("_apply(): Couldn't swap Conv3d.weight", call 22), and nothing was built.
        self._blocks = [runtime.compile_only(), FakeTensorMode(allow_non_fake_inputs=True), torch.device("cuda"),
                        _modules_stay()]
        for block in self._blocks:
            block.__enter__()
        return self

    def inputs(self, values: tuple) -> tuple:
        """``values`` (shape-only) as fake tensors on the worker's CUDA device."""
        import torch
        return tuple(torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="cuda")
                     if isinstance(v, torch.Tensor) else v for v in values)

    def __exit__(self, *exc):
        for block in reversed(self._blocks):
            block.__exit__(*exc)
        return False


@contextmanager
def _modules_stay():
    """Inside the block, ``Module.to`` and ``Module.cuda`` return the module as it is (made on the fake
    CUDA device already: see CudaCompileOnly)."""
    import torch
    cls = torch.nn.Module
    saved = cls.to, cls.cuda
    cls.to = cls.cuda = lambda self, *args, **kwargs: self
    try:
        yield
    finally:
        cls.to, cls.cuda = saved


@hookimpl
def register_backends(register):
    register(CudaBackend())


__all__ = ["CudaBackend", "compile_with_nvcc", "entry_problem", "register_backends"]
