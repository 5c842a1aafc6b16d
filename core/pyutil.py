"""Small Python-source utilities that several parts of mkbench need, kept in one place so that
they agree: which names a module binds at top level, the dotted name an expression spells, what
its imports make each local name stand for, and importing a module from a file path once per process.

Why one copy: the static checks, the candidate loader, the task loader, the importers and the
backends all answer these questions, and answers that differ (one counts ``import a.b`` as
binding ``a``, another as ``a.b``; one forgets ``AnnAssign``) make a file valid to one module and
invalid to the next.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping


def top_level_names(source: str | ast.Module) -> set[str]:
    """Names a module binds at top level: functions, classes, assignment targets (plain,
    annotated, augmented, tuple-unpacked, walrus at statement level), imports (``import a.b``
    binds ``a``; ``import a.b as c`` binds ``c``), and names bound inside top-level ``if``/``try``/
    ``with``/``for`` blocks (they bind module globals too). ``from m import *`` binds nothing
    knowable and is ignored."""
    tree = ast.parse(source) if isinstance(source, str) else source
    names: set[str] = set()

    def targets(node: ast.AST) -> None:
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for elt in node.elts:
                targets(elt)
        elif isinstance(node, ast.Starred):
            targets(node.value)

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    targets(t)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets(node.target)
            elif isinstance(node, ast.Import):
                names.update(a.asname or a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                names.update(a.asname or a.name for a in node.names if a.name != "*")
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.NamedExpr):
                targets(node.value.target)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                targets(node.target)
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        targets(item.optional_vars)
                visit(node.body)
            elif isinstance(node, (ast.If, ast.While)):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
                visit(node.body)
                for handler in node.handlers:
                    if handler.name:
                        names.add(handler.name)
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)
    visit(tree.body)
    return names


def dotted(node: ast.AST, aliases: Mapping[str, str] | None = None) -> str | None:
    """``torch.nn.functional.relu`` for the expression ``torch.nn.functional.relu`` (attribute
    chains on a name), None for anything else (calls, subscripts, literals). With ``aliases``
    (local name -> what it stands for, e.g. ``{"F": "torch.nn.functional"}``) the head name is
    replaced by what it stands for."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    head = aliases.get(node.id, node.id) if aliases else node.id
    return ".".join([head, *reversed(parts)])


def import_bindings(node: ast.Import | ast.ImportFrom) -> dict[str, str]:
    """What one import statement binds: local name -> the module path or object it stands for
    (see :func:`import_aliases`). A relative ``from . import x`` binds ``x`` to ``.x``;
    ``from m import *`` binds nothing knowable."""
    if isinstance(node, ast.Import):
        return {a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0] for a in node.names}
    return {a.asname or a.name: f"{node.module or ''}.{a.name}" for a in node.names if a.name != "*"}


def import_aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> the module path or object it stands for, from every import in ``tree``
    (inside functions too: candidates import there): ``import torch.nn.functional as F`` gives
    ``{"F": "torch.nn.functional"}``, ``from torch import nn`` gives ``{"nn": "torch.nn"}``,
    ``import torch.nn`` gives ``{"torch": "torch"}``. A later import of a name wins; relative
    imports without a module (``from . import x``) are left out. Scanners that follow imports in
    visiting order (what a name means at a given line) call :func:`import_bindings` per statement."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and node.module):
            out.update(import_bindings(node))
    return out


def module_name_for(path: str | Path, prefix: str) -> str:
    """A ``sys.modules`` key unique to the file's resolved path: ``<prefix>_<stem>_<digest>``."""
    resolved = Path(path).resolve()
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:10]
    stem = "".join(c if c.isalnum() else "_" for c in resolved.stem)
    return f"{prefix}_{stem}_{digest}"


def import_path(path: str | Path, name: str | None = None, *, prefix: str = "mkbench_file",
                preset: Mapping[str, Any] | None = None, cache: bool = True) -> ModuleType:
    """Import the Python file at ``path`` as module ``name`` (default: :func:`module_name_for`
    with ``prefix``), once per process when ``cache``. ``preset`` globals are set before the
    module's code runs (e.g. the device a rewritten source refers to). A module whose code
    raises is removed from ``sys.modules`` and the exception propagates unchanged, so callers
    can report it their own way."""
    path = Path(path).resolve()
    name = name or module_name_for(path, prefix)
    if cache and name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    for key, value in (preset or {}).items():
        setattr(module, key, value)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


__all__ = ["dotted", "import_aliases", "import_bindings", "import_path", "module_name_for", "top_level_names"]
