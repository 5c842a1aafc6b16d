"""Reading a Python-hosted CUDA or HIP candidate without running it: its entry point, the
device-code strings it holds, and the kernels those strings define.

CI machines have nvcc but no GPU, so the CUDA and HIP backends compile a candidate's sources
without importing it; the profiler side (``kernel_names``) needs the kernels' names before the
candidate runs. The source rule (documented in docs/backends/cuda.md and hip.md):

* a string is resolved when it is a literal, a top-level name bound to a resolvable string, a name
  bound once to one inside the function that makes the call (or a function around it), an attribute
  ``self.x`` bound once to one in the methods of the class around the call, or a ``+`` of
  resolvable strings; a list or tuple of them counts as several sources;
* CUDA: the code argument of every ``RawModule(code=...)`` / ``RawKernel(code, name)`` call, the
  ``cuda_sources=`` (and, for integrity checks only, ``cpp_sources=``) of every ``load_inline``
  call, and every top-level name matching ``CUDA_SOURCE``, ``*_CUDA_SOURCE``, ``CUDA_SRC`` ...;
* HIP: the top-level ``HIP_SOURCE`` and the first argument of every ``load_module`` call.

Anything else (f-strings, ``.format``, sources read from files) is reported as unresolved.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from mkbench.candidate import ENTRY_POINT

_CUDA_NAME = re.compile(r"(^|_)CUDA_(SOURCE|SRC|CODE)S?(_|$)")


@dataclass(frozen=True)
class Source:
    text: str
    line: int          # file line of the text's first line (exact when `exact`)
    label: str         # where it was found, e.g. "CUDA_SOURCE (line 12)", "load_inline cuda_sources (line 40)"
    kind: str          # "nvrtc" (RawModule / RawKernel / CUDA_SOURCE), "load_inline", "cpp", "hip"
    exact: bool        # line numbers inside the text map one-to-one onto the file


@dataclass
class Found:
    sources: list[Source] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)   # "line 30: RawModule code is not a constant string"
    names: set[str] = field(default_factory=set)           # top-level names defined in the module

    def of_kind(self, *kinds: str) -> list[Source]:
        return [s for s in self.sources if s.kind in kinds]


def _exact(node: ast.Constant, text: str) -> bool:
    """Whether the literal's lines are the file's lines: a single literal whose value has as many
    newlines as its source segment (no escaped newlines, no implicit concatenation)."""
    seg = ast.get_source_segment(text, node)
    if seg is None:
        return False
    body = seg.lstrip("rRbBuUfF")
    for quote in ('"""', "'''", '"', "'"):
        if body.startswith(quote):
            body = body[len(quote):]
            break
    return body.count("\n") == node.value.count("\n") and "\\\n" not in seg


class _Resolver:
    def __init__(self, tree: ast.Module, text: str):
        self.text = text
        self.consts: dict[str, tuple[str, int, bool]] = {}  # name -> (value, line, exact)
        self.names: set[str] = set()
        self._bind(tree.body)

    def within(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> _Resolver:
        """This resolver inside ``func``: its names bound once there join (or shadow) the outer ones.
        A kernel source held in a local (``code = '''...'''; cp.RawKernel(code, "k")``, as generated
        candidates write it) then names its kernels: unresolved, a candidate's own kernel was taken
        for a framework kernel in the device trace (CUDA-L1's VanillaRNN on an H200)."""
        inner = _Resolver.__new__(_Resolver)
        inner.text, inner.names, inner.consts = self.text, self.names, dict(self.consts)
        assigns = [n for n in ast.walk(func) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))]
        bound: dict[str, int] = {}
        for node in assigns:
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name):
                    bound[t.id] = bound.get(t.id, 0) + (2 if isinstance(node, ast.AugAssign) else 1)
        inner._bind(sorted((n for n in assigns if not isinstance(n, ast.AugAssign)),
                           key=lambda n: (n.lineno, n.col_offset)), names=False)
        for name, count in bound.items():
            if count > 1:  # rebound or extended: which text the call sees is not known without running it
                inner.consts.pop(name, None)
        return inner

    def within_class(self, cls: ast.ClassDef) -> _Resolver:
        """This resolver inside the methods of ``cls``: an attribute bound once in the class's methods
        to a resolvable string (``self.code = '''...'''`` in ``__init__``, ``load_inline(...,
        cuda_sources=self.code)`` later) resolves as ``self.code``."""
        inner = _Resolver.__new__(_Resolver)
        inner.text, inner.names, inner.consts = self.text, self.names, dict(self.consts)
        bound: dict[str, list] = {}
        for node in ast.walk(cls):
            targets = (node.targets if isinstance(node, ast.Assign) else
                       [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    bound.setdefault(f"self.{t.attr}", []).append(None if isinstance(node, ast.AugAssign) else node)
        for key, nodes in bound.items():
            resolved = self.resolve(nodes[0].value) if len(nodes) == 1 and nodes[0] is not None else None
            if resolved is not None:
                inner.consts[key] = resolved
        return inner

    def _bind(self, statements, names: bool = True) -> None:
        for node in statements:
            targets, value = [], None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and names:
                self.names.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and names:
                self.names.update((a.asname or a.name).split(".")[0] for a in node.names)
            for t in targets:
                if isinstance(t, ast.Name):
                    if names:
                        self.names.add(t.id)
                    resolved = self.resolve(value)
                    if resolved is not None:
                        self.consts[t.id] = resolved
                    else:
                        self.consts.pop(t.id, None)

    def resolve(self, node: ast.AST | None) -> tuple[str, int, bool] | None:
        """(text, first line, exact) of a string expression, or None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value, node.lineno, _exact(node, self.text)
        if isinstance(node, ast.Name) and node.id in self.consts:
            return self.consts[node.id]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return self.consts.get(f"self.{node.attr}")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.resolve(node.left), self.resolve(node.right)
            if left and right:
                return left[0] + right[0], left[1], False
        return None

    def resolve_many(self, node: ast.AST | None) -> list[tuple[str, int, bool]] | None:
        if isinstance(node, (ast.List, ast.Tuple)):
            out = [self.resolve(e) for e in node.elts]
            return None if any(o is None for o in out) else out
        if isinstance(node, ast.Name) and node.id in self.consts:
            return [self.consts[node.id]]
        one = self.resolve(node)
        return [one] if one else None


def _calls(tree: ast.Module, r: _Resolver):
    """Every call in the module, with the resolver of the function (and class) it is made in."""
    def visit(node: ast.AST, res: _Resolver):
        for child in ast.iter_child_nodes(node):
            inner = (res.within(child) if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                     else res.within_class(child) if isinstance(child, ast.ClassDef) else res)
            if isinstance(child, ast.Call):
                yield child, res
            yield from visit(child, inner)
    yield from visit(tree, r)


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _arg(node: ast.Call, keyword: str, position: int | None) -> ast.AST | None:
    for kw in node.keywords:
        if kw.arg == keyword:
            return kw.value
    if position is not None and len(node.args) > position:
        return node.args[position]
    return None


def parse(path: Path) -> tuple[ast.Module, str]:
    text = Path(path).read_text()
    return ast.parse(text, filename=str(path)), text


def find(path: Path, language: str) -> Found:
    """Sources of ``language`` ("cuda" or "hip") in the candidate at ``path`` (which must parse)."""
    tree, text = parse(path)
    r = _Resolver(tree, text)
    found = Found(names=set(r.names))
    seen: set[tuple[str, str]] = set()

    def add(items, label: str, kind: str, line: int) -> None:
        if items is None:
            found.unresolved.append(f"line {line}: {label} is not a constant string (see the source rule)")
            return
        for text_, first, exact in items:
            if (text_, kind) not in seen:
                seen.add((text_, kind))
                found.sources.append(Source(text_, first, f"{label} (line {line})", kind, exact))

    if language == "cuda":
        for node, res in _calls(tree, r):
            name = _callee(node)
            if name in ("RawModule", "RawKernel"):
                code = _arg(node, "code", 0)
                if code is not None:  # RawModule(path=...) loads a prebuilt cubin: nothing to compile
                    add(res.resolve_many(code), f"{name} code", "nvrtc", node.lineno)
            elif name == "load_inline":
                cuda = _arg(node, "cuda_sources", 2)
                if cuda is not None:
                    add(res.resolve_many(cuda), "load_inline cuda_sources", "load_inline", node.lineno)
                cpp = _arg(node, "cpp_sources", 1)
                if cpp is not None:
                    items = res.resolve_many(cpp)
                    if items is not None:
                        add(items, "load_inline cpp_sources", "cpp", node.lineno)
        for name, (value, line, exact) in r.consts.items():
            if _CUDA_NAME.search(name.upper()) and (value, "nvrtc") not in seen and (value, "load_inline") not in seen:
                add([(value, line, exact)], name, "nvrtc", line)
    elif language == "hip":
        if "HIP_SOURCE" in r.consts:
            add([r.consts["HIP_SOURCE"]], "HIP_SOURCE", "hip", r.consts["HIP_SOURCE"][1])
        elif "HIP_SOURCE" in r.names:
            found.unresolved.append("HIP_SOURCE is not a constant string (see the source rule)")
        for node, res in _calls(tree, r):
            if _callee(node) == "load_module":
                src = _arg(node, "source", 0)
                if src is not None:
                    add(res.resolve_many(src), "load_module source", "hip", node.lineno)
    else:  # pragma: no cover - a programming error
        raise ValueError(language)
    return found


def line_directive(source: Source, path: Path) -> str:
    """A ``#line`` directive that makes compiler messages name the candidate file and line (only
    where the text's lines are the file's lines)."""
    if not source.exact:
        return ""
    return f'#line {source.line} "{Path(path).as_posix()}"\n'


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


# --- kernel names ----------------------------------------------------------------------------------
_COMMENT_OR_LITERAL = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_TOKEN = re.compile(r"[A-Za-z_]\w*|::|\[\[|\]\]|\S")
# Attribute-like words that may sit between __global__ and the kernel's name, with (arguments).
_DECL_ATTRIBUTES = {"__launch_bounds__", "__maxnreg__", "__cluster_dims__", "__attribute__", "__declspec", "alignas",
                    "__align__"}


def _blank(text: str) -> str:
    """Comments, string/char literals and preprocessor directives replaced by spaces (newlines kept)."""
    def spaces(m: re.Match) -> str:
        s = m.group(0)
        return re.sub(r"[^\n]", " ", s) if s.startswith(("/", "#")) else '""'
    return _DIRECTIVE.sub(spaces, _COMMENT_OR_LITERAL.sub(spaces, text))


def _skip_balanced(tokens: list[str], i: int, open_: str, close: str) -> int:
    """Index after the bracket group starting at tokens[i] == open_ (len(tokens) if unbalanced)."""
    depth = 0
    while i < len(tokens):
        depth += (tokens[i] == open_) - (tokens[i] == close)
        i += 1
        if depth == 0:
            return i
    return i


def _global_functions(text: str) -> set[str]:
    """The names of the ``__global__`` functions *defined* in one CUDA/HIP source: the identifier
    right before the parameter list (after any ``__launch_bounds__(...)``-like attributes; template
    arguments of an explicit specialisation and namespace qualifiers dropped), counted only when
    the parameter list is followed by a body, not by ``;`` (a declaration or an instantiation)."""
    tokens = _TOKEN.findall(_blank(text))
    names: set[str] = set()
    for start, tok in enumerate(tokens):
        if tok != "__global__":
            continue
        i, name = start + 1, None
        while i < len(tokens) and tokens[i] not in ("(", ";", "{"):
            t = tokens[i]
            if t in _DECL_ATTRIBUTES and i + 1 < len(tokens) and tokens[i + 1] == "(":
                i = _skip_balanced(tokens, i + 1, "(", ")")
                continue
            if t == "[[":
                i = _skip_balanced(tokens, i, "[[", "]]")
                continue
            if t == "<":  # foo<float>(...): the name is before the template arguments
                i = _skip_balanced(tokens, i, "<", ">")
                continue
            if re.fullmatch(r"[A-Za-z_]\w*", t):
                name = t
            i += 1
        if name is None or i >= len(tokens) or tokens[i] != "(":
            continue
        i = _skip_balanced(tokens, i, "(", ")")
        while i < len(tokens) and tokens[i] not in ("{", ";"):
            i += 1
        if i < len(tokens) and tokens[i] == "{":
            names.add(name)
    return names


def kernel_names(path: Path) -> set[str]:
    """The names of the ``__global__`` functions defined in the CUDA and HIP sources found
    statically in the candidate at ``path`` (the source rule above; host C++ of ``load_inline``
    ``cpp_sources`` excluded), as a profiler lists them once demangled and stripped of parameters
    and template arguments: ``extern "C"`` names as written, C++ kernels by their bare identifier
    (``ns::scale<float>(float*, int)`` -> ``scale``). Kernels generated by macros, or held in
    strings the rule cannot resolve, are not seen."""
    names: set[str] = set()
    for language in ("cuda", "hip"):
        for src in find(path, language).sources:
            if src.kind != "cpp":
                names |= _global_functions(src.text)
    return names


__all__ = ["Found", "Source", "entry_problem", "find", "kernel_names", "line_directive", "parse"]
