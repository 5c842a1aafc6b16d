"""Import-time source analysis and rewriting for KernelBench-X files: model answers to code, the
device rewrite, which names a harness needs from the reference (its *entries*), which helper
modules it imports and where they live, and which of a harness's imports a prediction relies on.

Nothing here runs task or prediction code; everything works on syntax trees.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import os
import re
from pathlib import Path

from ..pyutil import dotted, top_level_names
from .kernelbench_x import DEVICE_NAME, SEPARATOR, SYNC_NAME

#: KernelBench-X category folder -> mkbench category
CATEGORY_MAP = {
    "Fusion": "fusion", "Math": "math", "LinearAlgebra": "linear_algebra", "Activation": "activation",
    "MatrixMultiply": "matmul", "Index": "index", "Loss": "loss", "Quantization": "quantization",
    "Reduce": "reduce", "Normalization": "normalization", "Optimizer": "optimizer", "SpatialOps": "spatial",
    "Convolution": "convolution", "Pooling": "pooling", "Random": "random",
}


def map_category(name: str | None) -> str | None:
    """mkbench category for a KernelBench-X category folder name (or an mkbench category name)."""
    if not name:
        return None
    from ..task import CATEGORIES
    lookup = {k.lower(): v for k, v in CATEGORY_MAP.items()} | {c: c for c in CATEGORIES}
    return lookup.get(name.lower())


def strip_fences(text: str) -> str:
    """The code in a model's answer: the first ```python (or ```py) fenced block, else the first
    fenced block of any language, else the whole text; chat end-of-turn tokens removed."""
    text = str(text).replace("<|im_end|>", "").replace("<|EOT|>", "")
    blocks = list(re.finditer(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", text, re.S))
    if blocks:
        python = [b for b in blocks if b.group(1).lower() in ("python", "py", "python3")]
        text = (python or blocks)[0].group(2)
    return text.strip() + "\n"


def above_separator(text: str) -> str:
    return text.split(SEPARATOR, 1)[0] if SEPARATOR in text else text


def entry_problem(code: str, names: set[str]) -> str | None:
    """KernelBench-X's kernel entry check: why ``code`` binds none of ``names`` at top level
    (a syntax error, an empty answer), or None."""
    if not code.strip():
        return "empty prediction"
    try:
        bound = top_level_names(code)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    if bound & names:
        return None
    return f"defines none of {', '.join(f'`{n}`' for n in sorted(names))} at top level"


# --- the device rewrite ---------------------------------------------------------------------------

class _DeviceRewriter(ast.NodeTransformer):
    """``"cuda"``/``"cuda:N"`` literals -> the global ``__kbx_device__``; ``x.cuda()`` ->
    ``x.to(__kbx_device__)``; ``torch.cuda.synchronize()`` -> ``__kbx_sync__()``."""

    def __init__(self):
        self.changed = False

    def visit_JoinedStr(self, node):  # f-string parts must stay constants
        return node

    def visit_Constant(self, node):
        if isinstance(node.value, str) and re.fullmatch(r"cuda(:\d+)?", node.value):
            self.changed = True
            return ast.copy_location(ast.Name(DEVICE_NAME, ast.Load()), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "cuda" and len(node.args) <= 1 \
                and not (isinstance(f.value, ast.Name) and f.value.id == "torch"):
            node.func = ast.copy_location(ast.Attribute(f.value, "to", ast.Load()), f)
            node.args = [ast.Name(DEVICE_NAME, ast.Load())]
            node.keywords = [k for k in node.keywords if k.arg == "non_blocking"]
            self.changed = True
        elif dotted(f) == "torch.cuda.synchronize":
            node.func = ast.copy_location(ast.Name(SYNC_NAME, ast.Load()), f)
            node.args, node.keywords = [], []
            self.changed = True
        return node


def _is_main_guard(test) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _runs_tests(node) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id.startswith("test_"):
            return True
        if isinstance(sub, ast.Name) and sub.id == "test_results":
            return True
    return False


def rewrite_source(source: str, *, strip_invocations: bool) -> tuple[str, bool]:
    """(source, changed): device literals rewritten; with ``strip_invocations`` also the
    module-level statements that run the tests removed (``test_results = test_x()``, prints of
    it, ``if __name__ == "__main__"`` blocks). Unchanged sources are returned verbatim; changed
    ones are written with ``ast.unparse`` (comments dropped)."""
    tree = ast.parse(source)
    changed = False
    if strip_invocations:
        body = []
        for node in tree.body:
            if isinstance(node, ast.If) and _is_main_guard(node.test):
                changed = True
                continue
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)) and _runs_tests(node):
                changed = True
                continue
            body.append(node)
        tree.body = body
    rewriter = _DeviceRewriter()
    tree = rewriter.visit(tree)
    if not (changed or rewriter.changed):
        return source, False
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n", True


# --- what a harness needs -------------------------------------------------------------------------

def find_test_function(source: str, stem: str) -> str | None:
    """The harness's test function: ``test_<stem>``, else its only ``test_*`` function."""
    tree = ast.parse(source)
    tests = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    if f"test_{stem}" in tests:
        return f"test_{stem}"
    return tests[0] if len(tests) == 1 else None


def bound_anywhere(tree: ast.AST) -> set[str]:
    """Every name bound anywhere in ``tree``: assignments, loop and comprehension targets,
    function and class names, parameters, imports, ``except ... as``, ``global``/``nonlocal``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Import):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names if a.name != "*")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def free_names(source: str | ast.AST, *, with_builtins: bool = False) -> set[str]:
    """Names a source reads that it binds nowhere: what it expects its surroundings to provide
    (a harness: the task's entries; a prediction: imports). Builtin names are left out unless
    ``with_builtins`` (a KernelBench-X task may define ``abs`` or ``sum``, shadowing the builtin)."""
    tree = ast.parse(source) if isinstance(source, str) else source
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    out = loaded - bound_anywhere(tree) - {DEVICE_NAME, SYNC_NAME, "__file__", "__name__"}
    return out if with_builtins else out - set(dir(builtins))


def reference_definitions(source: str) -> set[str]:
    """Names the reference part defines itself at top level (functions, classes, assigned
    names; not its imports)."""
    tree = ast.parse(source)
    imported = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= top_level_names(ast.Module(body=[node], type_ignores=[]))
    return top_level_names(tree) - imported


def harness_entries(reference: str, harness: str, stem: str, test_fn: str) -> tuple[tuple[str, ...], str | None]:
    """(entries, primary): the names the harness reads without binding that the reference
    defines, and the one a single implementation stands for: ``<stem>`` if an entry, else the
    name the test function is named after, else the only entry. KernelBench-X files whose
    function is not named after the file (``AdamW.py`` defining ``adamw_step``) and files whose
    reference is a class the harness instantiates are handled alike."""
    entries = tuple(sorted(free_names(harness, with_builtins=True) & reference_definitions(reference)))
    if stem in entries:
        return entries, stem
    named = test_fn.removeprefix("test_")
    if named in entries:
        return entries, named
    return entries, (entries[0] if len(entries) == 1 else None)


# --- helper modules the harness imports ------------------------------------------------------------

def imported_modules(source: str) -> set[str]:
    """Top-level module names a source imports (``from data_utils import x`` -> ``data_utils``)."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return out


class _PathEval:
    """Evaluates the ``sys.path`` expressions KernelBench-X harnesses use (``os.path.join``,
    ``abspath``, ``dirname``, ``normpath``, ``realpath``, ``__file__``, string literals) for a
    given ``__file__``; anything else is unknown (None)."""

    FUNCS = {"os.path.join": os.path.join, "os.path.dirname": os.path.dirname, "os.path.normpath": os.path.normpath,
             "os.path.abspath": lambda p: p, "os.path.realpath": lambda p: p}  # relative paths resolved later

    def __init__(self, file: Path):
        self.file = str(file)

    def __call__(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and node.id == "__file__":
            return self.file
        if isinstance(node, ast.Call) and not node.keywords:
            fn = self.FUNCS.get(dotted(node.func) or "")
            args = [self(a) for a in node.args]
            if fn is not None and all(a is not None for a in args):
                return fn(*args)
        return None


def sys_path_additions(source: str, file: Path) -> list[str]:
    """The folders a source adds with ``sys.path.append(...)``/``sys.path.insert(i, ...)`` at any
    depth, evaluated for ``__file__`` = ``file`` (relative results stay relative)."""
    evaluate = _PathEval(file)
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and dotted(node.func) in ("sys.path.append", "sys.path.insert") and node.args:
            value = evaluate(node.args[-1])
            if value is not None:
                out.append(value)
    return out


def find_helpers(source: str, file: Path, root: Path | None = None) -> tuple[dict[str, Path], list[str]]:
    """({module: file}, [modules not found]) for the modules a harness imports that Python
    cannot import here and that live in a folder the harness adds to ``sys.path`` (or in the
    file's own folder). A relative folder (``os.path.abspath("utils")``: relative to
    KernelBench-X's working directory, its checkout root) is tried against ``root`` and every
    folder above ``file``. Helpers that import further helpers are not followed (KernelBench-X's
    ``data_utils`` imports only torch)."""
    folders = []
    for entry in sys_path_additions(source, file):
        if os.path.isabs(entry):
            folders.append(Path(os.path.normpath(entry)))
        else:
            bases = ([Path(root).resolve()] if root else []) + list(Path(file).resolve().parents)
            folders += [Path(os.path.normpath(base / entry)) for base in bases]
    folders.append(Path(file).resolve().parent)
    found: dict[str, Path] = {}
    missing: list[str] = []
    for module in sorted(imported_modules(source)):
        if importlib.util.find_spec(module) is not None:
            continue
        hit = next((d / f"{module}.py" for d in folders if (d / f"{module}.py").is_file()), None)
        if hit is None:
            missing.append(module)
        else:
            found[module] = hit
    return found, missing


# --- imports a prediction relies on ------------------------------------------------------------------

#: The imports KernelBench-X harnesses share (every one has ``import torch``; most also import
#: ``torch.nn.functional as F``): what a prediction for one of mkbench's own tasks may rely on.
COMMON_HARNESS_IMPORTS = ("import torch", "import torch.nn.functional as F")


def harness_imports(harness_source: str) -> list[str]:
    """The harness's top-level import statements, as source lines, in order."""
    return [ast.unparse(node) for node in ast.parse(harness_source).body
            if isinstance(node, (ast.Import, ast.ImportFrom))]


def imports_needed(prediction: str, available: list[str] | tuple[str, ...]) -> list[str]:
    """The statements of ``available`` that bind a name the prediction reads without binding it
    anywhere. KernelBench-X concatenates a prediction with its test file, so a prediction may use
    ``torch`` and import only ``triton``; such a prediction needs these lines appended to run
    alone. Nothing the prediction binds itself is ever shadowed."""
    try:
        wanted = free_names(prediction)
    except SyntaxError:
        return []
    out = []
    for line in available:
        binds = top_level_names(line)
        if binds & wanted:
            out.append(line)
            wanted -= binds
    return out


__all__ = ["CATEGORY_MAP", "COMMON_HARNESS_IMPORTS", "above_separator", "entry_problem", "find_helpers",
           "find_test_function", "free_names", "harness_entries", "harness_imports", "imports_needed",
           "map_category", "reference_definitions", "rewrite_source", "strip_fences"]
