"""HIP backend: HIP C++ kernels held in a candidate's top-level ``HIP_SOURCE`` and launched through
the backend's loader (``from mkbench.backends.hip import load_module``). AMD GPUs compile with
hiprtc; NVIDIA GPUs compile with NVRTC after hip_on_cuda.h, the backend's own mapping of HIP's
device-side names onto CUDA. Without either GPU, sources are compiled with nvcc through that
mapping (the gating verdict) and with hipcc for AMD targets (side checks); see docs/backends/hip.md.
What it shares with the CUDA backend (source finding, nvcc, launch counting, static checks) lives
in mkbench.backends.native."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mkbench.backend import Backend
from mkbench.backends.native import nvcc
from mkbench.backends.native.launches import NativeLaunchCounter
from mkbench.backends.native.sources import entry_problem
from mkbench.candidate import ENTRY_POINT, load_python_candidate
from mkbench.errors import CompileError, Unavailable
from mkbench.hookspecs import hookimpl

from .loader import load_module  # the candidates' entry to the loader

LOADER_IMPORT = {"mkbench.backends.hip": {"load_module"}}


class HipBackend(Backend):
    name = "hip"
    language = "hip"
    suffix = ".py"
    candidate_contract = (
        "One Python file per task at <category>/<task>.py holding the HIP C++ device code as a top-level string "
        "constant HIP_SOURCE (a literal, or + of literals; extern \"C\" __global__ kernels; #include <hip/...> "
        f"lines allowed) and a top-level `{ENTRY_POINT}` (or a callable named after the task) called with the task's "
        "inputs as positional arguments (torch GPU tensors and Python scalars). It builds the kernels with "
        "`from mkbench.backends.hip import load_module`; `load_module(HIP_SOURCE).get_function(name)(grid, block, "
        "args, shared_mem=0)` launches on torch's current stream, with args a tuple of GPU tensors (passed as "
        "pointers), numpy scalars of the parameter types (np.int32, np.float32...; a Python int is passed as int64, "
        "a float as double). It returns new torch tensors (one, or a tuple in the reference's order) with the "
        "reference's shapes and dtypes, never modifying its inputs. Write wavefront-size-agnostic code: warpSize "
        "is 64 on AMD CDNA and 32 on NVIDIA (loop shuffles from warpSize/2, blocks a multiple of 64 threads). On "
        "NVIDIA GPUs only the HIP device API in docs/backends/hip.md is mapped. Launches counted: those through "
        "the loader. Torch ops, vendor libraries (rocBLAS, MIOpen) and host-side compute are not allowed. Without a "
        "GPU, HIP_SOURCE is compiled with nvcc for sm_90 through the mapping (the verdict) and with hipcc for "
        "gfx90a/gfx940/gfx942 (recorded apart)."
    )

    # --- parent side -------------------------------------------------------------------
    def availability(self, hw):
        from .compile import find_hipcc
        if hw.device == "cuda" and hw.vendor == "nvidia":
            if importlib.util.find_spec("cupy") is None:
                raise Unavailable("HIP on an NVIDIA GPU compiles through NVRTC with CuPy, which is not installed")
            return
        if hw.device == "cuda" and hw.vendor == "amd":
            try:
                from .loader import amd_libraries
                amd_libraries()
            except OSError as exc:
                raise Unavailable(f"hiprtc / amdhip64 not loadable: {exc}") from None
            return
        if nvcc.find_nvcc() is None:
            why = "no hipcc either" if find_hipcc() is None else "hipcc alone cannot give the gating compile"
            raise Unavailable(f"no AMD or NVIDIA GPU on profile {hw.name} and no nvcc to compile-check HIP sources "
                              f"({why})")

    def compile_only(self, hw):
        if hw.device == "cuda" and hw.vendor in ("nvidia", "amd"):
            return None
        return (f"no AMD or NVIDIA GPU on profile {hw.name}: HIP sources were compiled (nvcc -arch={nvcc.arch_for(hw)} "
                "through hip_on_cuda.h; hipcc for AMD targets in compile_checks), not run")

    def reference_dir(self):
        return Path(__file__).parent / "kernels"

    def static_problem(self, task, source):
        from .compile import hip_sources
        problem = entry_problem(source, task.name, allow_model_new=False)
        if problem:
            return problem
        found = hip_sources(source)
        if not found.sources:
            return f"{source}: " + ("; ".join(found.unresolved) or "defines no top-level HIP_SOURCE string")
        return None

    def static_findings(self, task, source):
        from mkbench.backends.native.checks import findings
        return findings(source, "hip", allowed_imports=LOADER_IMPORT)

    # --- worker side -------------------------------------------------------------------
    def compile_checks(self, task, source, hw):
        from .compile import hipcc_checks
        return hipcc_checks(source)

    def compile(self, task, source, hw):
        from . import compile as hip_compile
        from . import loader
        if self.compile_only(hw):
            hip_compile.nvcc_check(source, nvcc.arch_for(hw))
            return _not_runnable
        # Build the statically known sources first, so compiler messages name the candidate's
        # file and line; the candidate's own load_module(HIP_SOURCE) then finds them built.
        for src in hip_compile.hip_sources(source).sources:
            try:
                loader.load_module(src.text, origin=(Path(source).as_posix(), src.line) if src.exact else None)
            except loader.HipCompileError as exc:
                raise CompileError(f"{'hiprtc' if loader.on_amd() else 'NVRTC (HIP through hip_on_cuda.h)'}: "
                                   f"{src.label}:\n{exc}") from None
        return load_python_candidate(source, task.name)

    worker_modules = ("cupy",)
    #: read by CuPy when imported (its kernel cache): set while the fork server imports it
    worker_import_env = ("CUPY_CACHE_DIR",)

    def own_kernel_names(self, task, source):
        from mkbench.backends.native.sources import kernel_names
        try:
            return kernel_names(Path(source))
        except (SyntaxError, OSError, UnicodeDecodeError):
            return None

    def launch_counter(self):
        """Counts the launches made through the loader inside the block."""
        return NativeLaunchCounter()

    def is_compile_error(self, exc):
        from .loader import HipCompileError
        return isinstance(exc, HipCompileError)


def _not_runnable(*args):
    raise RuntimeError("compile-only: this machine has no AMD or NVIDIA GPU")


@hookimpl
def register_backends(register):
    register(HipBackend())


__all__ = ["HipBackend", "load_module", "register_backends"]
