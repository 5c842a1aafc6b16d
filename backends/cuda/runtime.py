"""The worker side of the cuda backend on an NVIDIA GPU: importing a candidate with its launches
counted, building it, and running it on torch's current stream.

Launch counting. CuPy's ``RawKernel`` and ``RawModule`` are Cython classes whose methods cannot be
patched, so before the candidate is imported ``cupy.RawKernel`` and ``cupy.RawModule`` are replaced
by subclasses that count each kernel call (``RawModule.get_function`` returns a counting proxy)
into the counter of ``mkbench.backends.native.launches``.
``torch.utils.cpp_extension.load_inline`` is replaced by a wrapper whose extension module counts
each call of its functions. Candidates that reach CuPy's classes another way
(``cupy._core.raw.RawKernel``), or launch with ``ElementwiseKernel``, are not counted: a correct
answer with no counted launch is judged a decoy.

A compile-only call (:func:`compile_only`, the compile-ahead worker's call on shape-only inputs)
builds what the candidate's first call builds (a ``load_inline`` extension made lazily in
``forward``, a CuPy kernel made in the call) and raises :class:`CompileOnlyCall` where a kernel
would be launched. A build that failed on a compiler error leaves a mark in its build directory, so
that the evaluated worker's same build fails at once, with the same message, instead of running
nvcc again while the device is held.

Nothing here runs on a machine without an NVIDIA GPU (compile-only mode imports no candidate).
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import traceback
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

from mkbench.backends.native import sources as _sources
from mkbench.backends.native.launches import count_launch
from mkbench.backends.native.nvrtc import is_compile_error as is_cupy_compile_error
from mkbench.backends.native.nvrtc import torch_stream
from mkbench.candidate import ENTRY_POINT
from mkbench.errors import CompiledNotLaunched, CompileError


class CompileOnlyCall(CompiledNotLaunched):
    """Raised where a kernel would be launched inside :func:`compile_only`: it was built, not run."""


_compile_only = False


@contextmanager
def compile_only():
    """Inside the block, the candidate's kernels are built when reached and never launched (see the
    module docstring). Only ever entered in a throwaway worker."""
    global _compile_only
    before, _compile_only = _compile_only, True
    try:
        yield
    finally:
        _compile_only = before


def launching(build: Callable[[], Any] | None = None) -> None:
    """Before a launch: count it; inside :func:`compile_only`, build instead (``build``) and stop."""
    if _compile_only:
        if build is not None:
            build()
        raise CompileOnlyCall("a compile-only call (compile ahead): the kernel was built, not launched")
    count_launch()


def _cupy_build(kernel) -> Callable[[], Any]:
    """What builds a CuPy kernel object without launching it (its ``kernel`` property compiles)."""
    return lambda: getattr(kernel, "kernel", None)


class CountingKernel:
    """A CuPy kernel (or any callable) that counts its calls; attributes reach the kernel."""

    __slots__ = ("_kernel",)

    def __init__(self, kernel):
        object.__setattr__(self, "_kernel", kernel)

    def __call__(self, *args, **kwargs):
        launching(_cupy_build(self._kernel))
        return self._kernel(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._kernel, name)

    def __setattr__(self, name, value):  # e.g. kernel.max_dynamic_shared_size_bytes = ...
        setattr(self._kernel, name, value)


def install_cupy_counting() -> bool:
    """Swap counting classes into the cupy namespace (once per process); False without CuPy."""
    if importlib.util.find_spec("cupy") is None:
        return False
    import cupy
    if getattr(cupy, "_mkbench_counting", False):
        return True
    base_kernel, base_module = cupy.RawKernel, cupy.RawModule
    try:
        class RawKernel(base_kernel):
            def __call__(self, *args, **kwargs):
                launching(_cupy_build(self))
                return base_kernel.__call__(self, *args, **kwargs)

        class RawModule(base_module):
            def get_function(self, name):
                return CountingKernel(base_module.get_function(self, name))
    except TypeError:  # a CuPy whose classes are final: factories instead (isinstance checks then fail)
        def RawKernel(*args, **kwargs):  # noqa: N802 - stands in for the class
            return CountingKernel(base_kernel(*args, **kwargs))

        class RawModule:  # a proxy, not a subclass
            def __init__(self, *args, **kwargs):
                object.__setattr__(self, "_module", base_module(*args, **kwargs))

            def get_function(self, name):
                return CountingKernel(self._module.get_function(name))

            def __getattr__(self, name):
                return getattr(self._module, name)

    RawKernel.__name__ = RawKernel.__qualname__ = "RawKernel"
    RawModule.__name__ = RawModule.__qualname__ = "RawModule"
    cupy.RawKernel, cupy.RawModule = RawKernel, RawModule
    cupy._mkbench_counting = True
    return True


class CountingExtension:
    """A ``load_inline`` extension module whose public functions count their calls."""

    def __init__(self, ext):
        object.__setattr__(self, "_ext", ext)
        object.__setattr__(self, "_wrapped", {})

    def __getattr__(self, name):
        attr = getattr(self._ext, name)
        if name.startswith("_") or not callable(attr):
            return attr
        wrapped = self._wrapped.get(name)
        if wrapped is None:
            def wrapped(*args, _fn=attr, **kwargs):
                launching()
                return _fn(*args, **kwargs)
            self._wrapped[name] = wrapped
        return wrapped


#: load_inline builds that failed in this worker, by build directory (which carries the hash of
#: everything that decides the build): asked again, the same error is raised at once, not after
#: another minute of nvcc (a KernelBench ModelNew is constructed by the prebuild and again at its
#: first call).
FAILED_BUILDS: dict[str, BaseException] = {}

#: in a build directory: the message of a build that failed on a compiler error (see replayed_failure)
FAILED_MARK = "mkbench-build-failed.txt"
#: a failed build's output with one of these was cut short by the machine, not refused by a compiler:
#: never replayed
TRANSIENT_FAILURES = ("signal", "Killed", "No space left", "out of memory", "Cannot allocate memory",
                      "Resource temporarily unavailable", "timed out", "Timeout")


def compiler_refused(exc: BaseException) -> bool:
    """Whether a load_inline failure is the compiler's refusal of the sources (a diagnostic such as
    ``x.cu(12): error: ...``), which the same sources, flags, toolchain and target always repeat."""
    text = str(exc)
    return ("Error building extension" in text and re.search(r"\berror\s*:|:\s*error\b", text) is not None
            and not any(t in text for t in TRANSIENT_FAILURES))


def remember_failure(directory: str, exc: BaseException) -> None:
    """Mark ``directory``'s build as refused by the compiler, for the unit's next worker."""
    if compiler_refused(exc):
        try:
            Path(directory, FAILED_MARK).write_text(str(exc))
        except OSError:  # unwritable: the next worker builds again, as before
            pass


def replayed_failure(directory: str) -> RuntimeError | None:
    """The failure of an earlier worker's identical build (the directory carries the hash of every
    input of the build: :func:`_cached_build`), raised again as torch raised it (``RuntimeError``,
    the same message), without running nvcc again; None where no such build failed."""
    try:
        return RuntimeError(Path(directory, FAILED_MARK).read_text())
    except OSError:
        return None


def build_failures() -> list[str]:
    """One line per failed load_inline build: its module name and nvcc's first error line."""
    out = []
    for directory, exc in FAILED_BUILDS.items():
        text = str(exc)
        first = next((line.strip() for line in text.splitlines() if " error" in line or "error:" in line), "")
        out.append(f"load_inline {os.path.basename(directory)} failed to build" + (f": {first[:200]}" if first else ""))
    return out


def _cached_build(original, args: tuple, kwargs: dict) -> dict:
    """load_inline's arguments with the build keyed by what decides the binary: the sources, the
    flags, the function list, torch's version, CUDA's and the device's architecture. The build
    directory and module name carry that key, so a resume or a re-run of the same candidate finds its
    extension built (ninja has nothing to do), and two candidates that both call their extension
    "matmul_cuda" can never load each other's."""
    import hashlib
    import inspect
    import os

    import torch
    bound = inspect.signature(original).bind(*args, **kwargs)
    bound.apply_defaults()
    call = dict(bound.arguments)
    call.update(call.pop("kwargs", {}) or {})
    key_parts = {k: v for k, v in call.items() if k not in ("verbose", "build_directory", "keep_intermediates")}
    arch = torch.cuda.get_device_capability() if torch.cuda.is_available() else os.environ.get("TORCH_CUDA_ARCH_LIST")
    digest = hashlib.sha256(repr((sorted(key_parts.items(), key=lambda kv: kv[0]), torch.__version__,
                                  torch.version.cuda,
                                  arch)).encode()).hexdigest()[:16]
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "torch_extensions")
    call["build_directory"] = os.path.join(root, f"mkbench-{digest}")
    call["name"] = f"{call['name']}_{digest}"
    os.makedirs(call["build_directory"], exist_ok=True)
    return call


def _building(directory: str, name: str):
    """Around a load_inline call that will run nvcc (no ``<name>.so`` in its build directory yet): host
    work, during which the unit may let go of the device (``--build-hold release``:
    :func:`mkbench.worker.host_work`); around one that only loads a built extension, nothing."""
    from contextlib import nullcontext
    if os.path.exists(os.path.join(directory, f"{name}.so")):
        return nullcontext()
    from mkbench.worker import host_work
    return host_work(f"load_inline {name}")


def install_load_inline_counting(found: _sources.Found, path: Path) -> None:
    """Wrap torch.utils.cpp_extension.load_inline: #line directives on the candidate's own CUDA
    sources (so nvcc's messages name the .py file and line), and a counting extension module."""
    from torch.utils import cpp_extension
    if getattr(cpp_extension.load_inline, "_mkbench", False):
        cpp_extension.load_inline._mkbench_found = (found, path)
        return
    original = cpp_extension.load_inline

    def load_inline(*args, **kwargs):
        found_, path_ = load_inline._mkbench_found
        by_text = {s.text: s for s in found_.of_kind("load_inline")}

        def tag(text):
            s = by_text.get(text) if isinstance(text, str) else None
            return _sources.line_directive(s, path_) + text if s else text
        if "cuda_sources" in kwargs:
            cs = kwargs["cuda_sources"]
            kwargs["cuda_sources"] = [tag(t) for t in cs] if isinstance(cs, (list, tuple)) else tag(cs)
        call = _cached_build(original, args, kwargs)
        directory = call["build_directory"]
        # the same sources, flags and target failed before, in this worker or an earlier one (compile ahead)
        failed = FAILED_BUILDS.get(directory) or replayed_failure(directory)
        if failed is not None:
            FAILED_BUILDS[directory] = failed
            raise failed
        try:
            with _building(directory, call["name"]):
                return CountingExtension(original(**call))
        except Exception as exc:
            FAILED_BUILDS[directory] = exc
            remember_failure(directory, exc)
            raise

    load_inline._mkbench = True
    load_inline._mkbench_found = (found, path)
    cpp_extension.load_inline = load_inline


def import_candidate(path: Path):
    """Import the candidate module; import errors become CompileError naming file and line."""
    path = Path(path)
    name = f"mkbench_cuda_candidate_{path.stem}_{abs(hash(str(path.resolve()))) % 10**10}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        if is_cupy_compile_error(exc):
            raise CompileError(f"{path}: NVRTC: {map_nvrtc_log(exc, path)}") from None
        tb = traceback.extract_tb(exc.__traceback__)
        where = next((f"{f.filename}:{f.lineno}" for f in reversed(tb) if f.filename == str(path)), str(path))
        raise CompileError(f"{where}: import failed: {type(exc).__name__}: {exc}") from None
    return module


def map_nvrtc_log(exc: BaseException, path: Path) -> str:
    """NVRTC's log with ``prog.cu(L)`` turned into ``<candidate>.py(L')`` where the failing source
    is one of the candidate's statically found strings with exact lines."""
    log = str(exc)
    text = getattr(exc, "source", None)
    if not isinstance(text, str):
        return log
    try:
        found = _sources.find(path, "cuda")
    except SyntaxError:
        return log
    for s in found.sources:
        if s.exact and text.endswith(s.text):
            offset = s.line - 1 - text[: len(text) - len(s.text)].count("\n")
            return re.sub(r"[^\s()]+\((\d+)\): (error|warning)",
                          lambda m: f"{path}({int(m.group(1)) + offset}): {m.group(2)}", log)
    return log


def _force_compile(module, path: Path) -> None:
    """Build the CuPy modules and kernels the candidate made at import, so NVRTC errors are
    compile errors rather than failures of the first call."""
    import cupy
    raw_types = tuple(t for t in (getattr(cupy, "RawModule", None), getattr(cupy, "RawKernel", None))
                      if isinstance(t, type))
    values = []
    for v in vars(module).values():
        values.extend(v.values() if isinstance(v, dict) else v if isinstance(v, (list, tuple)) else [v])
    for v in values:
        try:
            if isinstance(v, CountingKernel) or (raw_types and isinstance(v, raw_types) and hasattr(v, "kernel")):
                v.kernel  # noqa: B018 - the property compiles (cached by CuPy)
            elif raw_types and isinstance(v, raw_types) and hasattr(v, "module"):
                v.module  # noqa: B018
        except Exception as exc:
            if is_cupy_compile_error(exc):
                raise CompileError(f"{path}: NVRTC: {map_nvrtc_log(exc, path)}") from None
            raise


class ModelNewEntry:
    """KernelBench's form: ``ModelNew()`` (mkbench tasks have no init inputs), moved to the inputs'
    device once, called as ``forward(*inputs)`` without autograd."""

    def __init__(self, cls: type):
        self.model = cls()
        self.device = None

    def __call__(self, *inputs):
        import torch
        device = next((v.device for v in inputs if isinstance(v, torch.Tensor)), None)
        if device is not None and device != self.device:
            self.model = self.model.to(device)
            self.device = device
        with torch.no_grad():
            return self.model(*inputs)


def load(task_name: str, path: Path) -> Callable[..., Any]:
    """Import with counting installed, build what can be built, and return the entry point:
    ``kernel_function``, a callable named after the task, or a ``ModelNew`` instance."""
    found = _sources.find(path, "cuda")
    has_cupy = install_cupy_counting()
    if found.of_kind("load_inline") or "load_inline" in Path(path).read_text():
        install_load_inline_counting(found, path)
    module = import_candidate(path)
    if has_cupy:
        _force_compile(module, path)
    fn = getattr(module, ENTRY_POINT, None) or getattr(module, task_name, None)
    if fn is not None:
        if not callable(fn):
            raise CompileError(f"{path}: `{ENTRY_POINT}` / `{task_name}` is not callable")
        return fn
    cls = getattr(module, "ModelNew", None)
    if isinstance(cls, type):
        try:
            return ModelNewEntry(cls)
        except Exception as exc:
            raise CompileError(f"{path}: ModelNew() failed: {type(exc).__name__}: {exc}") from None
    raise CompileError(f"{path}: defines neither `{ENTRY_POINT}`, `{task_name}` nor a class `ModelNew`")


__all__ = ["CompileOnlyCall", "CountingExtension", "CountingKernel", "compile_only",
            "ModelNewEntry", "import_candidate", "install_cupy_counting",
           "install_load_inline_counting", "is_cupy_compile_error", "load", "torch_stream"]
