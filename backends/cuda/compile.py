"""Compile-only builds of CUDA candidates (no NVIDIA GPU here) and the static entry-point check."""

from __future__ import annotations

import ast
from pathlib import Path

from mkbench.candidate import ENTRY_POINT
from mkbench.errors import CompileError

from . import nvcc, sources


def entry_problem(path: Path, task_name: str, allow_model_new: bool) -> str | None:
    """Parse without executing: a syntax error, or no entry point."""
    try:
        tree = ast.parse(Path(path).read_text(), filename=str(path))
    except SyntaxError as exc:
        return f"{path}:{exc.lineno}: syntax error: {exc.msg}"
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path}: cannot read: {exc}"
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    if ENTRY_POINT in names or task_name in names or (allow_model_new and "ModelNew" in names):
        return None
    also = ", nor a class `ModelNew`" if allow_model_new else ""
    return f"{path}: defines neither `{ENTRY_POINT}` nor `{task_name}` at top level{also}"


def compile_with_nvcc(path: Path, arch: str):
    """Compile-only mode: every statically found CUDA source through nvcc for ``arch``. Raises
    CompileError with nvcc's message (file:line of the candidate where the lines map)."""
    found = sources.find(path, "cuda")
    todo = found.of_kind("nvrtc", "load_inline")
    if not todo:
        why = "; ".join(found.unresolved) or "no RawModule/RawKernel code, load_inline cuda_sources or CUDA_SOURCE string"
        raise CompileError(f"{path}: no CUDA source found statically to compile ({why})")
    torch_flags = None
    for src in todo:
        flags = list(nvcc.NVRTC_FLAGS)
        if src.kind == "load_inline":
            torch_flags = torch_flags if torch_flags is not None else nvcc.torch_extension_flags()
            flags = torch_flags
        ok, message = nvcc.compile_device(sources.line_directive(src, path) + src.text, arch=arch, flags=flags)
        if not ok:
            where = "" if src.exact else f" [{src.label}; line numbers are relative to that string]"
            raise CompileError(f"nvcc -arch={arch}: {src.label}{where}:\n{message}")
    return _not_runnable


def _not_runnable(*args):
    raise RuntimeError("compile-only: this machine has no NVIDIA GPU")
