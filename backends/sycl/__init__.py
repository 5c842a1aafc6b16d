"""sycl backend: kernels in OpenCL C (the kernel language SYCL grew from), with host code written
against pyopencl, run on one of two paths: through pyopencl on an OpenCL device (NVIDIA's OpenCL
driver on a ``cuda`` profile; PoCL or Intel's OpenCL CPU runtime on the ``cpu`` profile where no
SYCL queue works), or, on the ``cpu`` profile, through a real SYCL queue (dpctl and Intel's SYCL
runtime) with a pyopencl-compatible facade, so that the same candidate file runs on both.

Modules: ``device`` picks the device and the path a profile means; ``paths`` is the interface both
paths implement (runtime selection, the build, a call's rules); ``opencl/`` (``runtime``, ``timing``)
builds, runs, counts and times candidates through pyopencl, ``dpctl/`` (``runtime``, ``facade``,
``timing``) through the SYCL queue; ``common`` is what both share; ``checks`` reads the host code.
pyopencl and dpctl are imported only in the worker (and in subprocess probes), so loading the
plugin stays cheap. docs/backends/sycl.md is the long form of the contract below.
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
from pathlib import Path

from mkbench.backend import Backend, LaunchCounter
from mkbench.candidate import ENTRY_POINT, load_python_candidate, static_entry_problem
from mkbench.errors import CompileError, Unavailable
from mkbench.hookspecs import hookimpl

SOURCE_NAME = "OPENCL_SOURCE"
OPTIONS_NAME = "BUILD_OPTIONS"
SYCL_CPP_COMPILERS = ("icpx", "acpp")
EXECUTION_PATH = "execution path"  # the compile_checks entry that records which path ran


def sycl_cpp_reason() -> str:
    """Why SYCL C++ sources are not an accepted candidate form here."""
    found = [c for c in SYCL_CPP_COMPILERS if shutil.which(c)]
    if not found:
        return "SYCL C++ candidates need a SYCL compiler (icpx -fsycl or acpp), and none is on PATH"
    return (f"{found[0]} is on PATH, but this version of the backend accepts OpenCL C only; SYCL C++ candidates "
            "are not supported yet")


class SyclBackend(Backend):
    name = "sycl"
    language = "opencl-c"
    suffix = ".py"
    candidate_contract = (
        f"One Python file per task at <category>/<task>.py defining a top-level string `{SOURCE_NAME}` of OpenCL C 1.2 "
        f"kernels (optional `{OPTIONS_NAME}`: a list of build flags) and a top-level callable `{ENTRY_POINT}(prog, "
        "queue, *inputs)` (or one named after the task). The backend builds the source once (a failed build is a "
        "compile error carrying the build log) and calls it with `prog`, whose attribute `prog.<name>` is the kernel "
        "of that name, the profiling pyopencl.CommandQueue to launch on, and the task's inputs in order: each tensor "
        "as a C-contiguous pyopencl.array.Array of the same shape (bfloat16 as uint16 bit patterns, bool as 1-byte "
        "bool, other dtypes as their numpy dtype), Python scalars unchanged. Launch with `prog.<name>(queue, "
        "global_size, local_size, *args)` (buffers as `array.data`, scalars as numpy scalars such as np.int32(n)), "
        "allocate outputs with pyopencl.array.empty / empty_like, and return an Array, or a tuple of them in the "
        "reference's order, with the reference's shapes and dtypes (uint16 for bfloat16). Inputs must not be modified. "
        "Not allowed: pyopencl.array arithmetic or library kernels, reading device data back to compute on the host, "
        "queues or programs of its own. On the cpu profile the same file runs through a SYCL queue where one works: "
        "`pyopencl` is then a facade over dpctl with the subset above (plus pyopencl.LocalMemory, "
        "zeros/zeros_like/to_device, Array.fill, reshape, ravel, view, queue.finish). SYCL C++ sources are not "
        "accepted in this version (see docs/backends/sycl.md)."
    )

    # --- parent side -----------------------------------------------------------------------
    def availability(self, hw):
        from .device import choose, execution_path, probe_listing, register_intel_cpu_runtime
        register_intel_cpu_runtime()
        path = execution_path(hw)
        if path.sycl:
            return
        try:
            if importlib.util.find_spec("pyopencl") is None:
                raise Unavailable("the pyopencl package is not installed (pip install pyopencl; on a CPU also "
                                  "pocl-binary-distribution)")
            choose(probe_listing(), hw.device, hw.vendor)
        except Unavailable as exc:
            if hw.device == "cpu":  # neither path: say why not SYCL too
                raise Unavailable(f"{exc.reason}; and no SYCL queue: {path.description}") from None
            raise

    def worker_env(self, hw):
        if hw.device != "cpu":
            return {}
        from .device import execution_path, path_env
        return path_env(execution_path(hw))

    def interpreted(self, hw):
        # PoCL and Intel's CPU runtime (under pyopencl or the SYCL queue) compile kernels to native
        # code for the host CPU: their times are real measurements of that CPU, like the eager
        # baseline's on the same profile, not an emulator's.
        return False

    def reference_dir(self):
        return Path(__file__).parent / "kernels"

    def static_problem(self, task, source):
        problem = static_entry_problem(source, task.name)
        if problem:
            return problem
        names = _top_level_names(Path(source))
        if SOURCE_NAME not in names:
            if "SYCL_SOURCE" in names:
                return f"{source}: {sycl_cpp_reason()}"
            return f"{source}: defines no top-level `{SOURCE_NAME}` (the OpenCL C source the backend builds)"
        return None

    def static_findings(self, task, source):
        from .checks import scan_file
        return scan_file(Path(source))

    # --- worker side -----------------------------------------------------------------------
    def compile_checks(self, task, source, hw):
        """Which path runs the candidate, stored with every row (extra.compile_checks): ok when it is
        the profile's own path (a SYCL queue on the cpu profile, NVIDIA's OpenCL on a GPU); on the
        cpu profile without SYCL the message says why."""
        from .device import execution_path
        path = execution_path(hw)
        return {EXECUTION_PATH: {"ok": path.sycl or hw.device != "cpu", "message": path.description}}

    def compile(self, task, source, hw):
        from .paths import build, runtime_for
        rt = runtime_for(hw)  # the pyopencl path's launch watch is in place before the candidate is imported
        with rt.importing():  # on the SYCL path, the candidate's `import pyopencl` finds the facade
            entry, opencl_source, options = _load(task, source)
        return rt.candidate(build(rt, opencl_source, options, Path(source)), entry)

    stream_timed = False  # an OpenCL (or SYCL) queue of its own, timed by its own events
    worker_modules = ("pyopencl",)

    def own_kernel_names(self, task, source):
        from mkbench.trace import global_function_names
        try:
            return global_function_names(Path(source).read_text())
        except (OSError, UnicodeDecodeError):
            return None

    def launch_counter(self):
        return OpenCLLaunchCounter()

    def time(self, fn, arg_sets, hw, settings):
        return fn.time(arg_sets, hw, settings)  # the path's own timer: OpenCL or SYCL profiling events


class OpenCLLaunchCounter(LaunchCounter):
    """Counts launches of kernels built from the candidate's OPENCL_SOURCE, on either path
    (pyopencl's own kernels, e.g. from pyopencl.array arithmetic, are not the candidate's)."""

    def __enter__(self):
        from .common import watching
        self._watching = watching()
        self._watch = self._watching.__enter__()
        self.count = 0
        return self

    def __exit__(self, *exc):
        self._watching.__exit__(*exc)
        self.count = self._watch.own


def _load(task, source):
    """Import the candidate: its entry point, OPENCL_SOURCE and BUILD_OPTIONS (None when absent)."""
    import sys
    entry = load_python_candidate(source, task.name)
    module = sys.modules.get(getattr(entry, "__module__", ""), None)
    if module is None or not hasattr(module, SOURCE_NAME):
        raise CompileError(f"{source}: `{SOURCE_NAME}` is not defined after import")
    return entry, getattr(module, SOURCE_NAME), getattr(module, OPTIONS_NAME, None)


def _top_level_names(path: Path) -> set[str]:
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return set()
    names = set()
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


@hookimpl
def register_backends(register):
    register(SyclBackend())
