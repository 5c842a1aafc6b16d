"""Loading Python-hosted candidates: a module defining ``kernel_function`` or a callable named
after the task (the KernelBench-X convention)."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

from .errors import CompileError

ENTRY_POINT = "kernel_function"


def source_hash(path: Path | None) -> str | None:
    if path is None:
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def static_entry_problem(path: Path, task_name: str) -> str | None:
    """Parse without executing; return a one-line problem or None."""
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
    if ENTRY_POINT not in names and task_name not in names:
        return f"{path}: defines neither `{ENTRY_POINT}` nor `{task_name}` at top level"
    return None


def load_python_candidate(path: Path, task_name: str) -> Callable[..., Any]:
    """Import a candidate file and return its entry point, raising CompileError with the cause."""
    path = Path(path)
    problem = static_entry_problem(path, task_name)
    if problem:
        raise CompileError(problem)
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    name = f"mkbench_candidate_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        tb = traceback.extract_tb(exc.__traceback__)
        where = next((f"{f.filename}:{f.lineno}" for f in reversed(tb) if f.filename == str(path)), str(path))
        raise CompileError(f"{where}: import failed: {type(exc).__name__}: {exc}") from None
    fn = getattr(module, ENTRY_POINT, None) or getattr(module, task_name, None)
    if not callable(fn):
        raise CompileError(f"{path}: `{ENTRY_POINT}` / `{task_name}` is not callable")
    return fn
