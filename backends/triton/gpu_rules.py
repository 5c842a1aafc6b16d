"""Rules of Triton's GPU compiler that its CPU interpreter does not enforce.

CI runs Triton kernels with ``TRITON_INTERPRET=1``, which executes the kernel body as Python: a
``@triton.jit`` function may read any module global there. The GPU compiler only accepts globals
that are ``tl.constexpr`` instances, so such a kernel is "correct" on CPU and a compile error on
every GPU (seen on an H100 with Triton 3.6 for a ``LOG2E = 1.44...`` constant). Reading the source
catches it on the CPU machine.
"""

from __future__ import annotations

import ast


def _is_jit(dec: ast.expr) -> bool:
    target = dec.func if isinstance(dec, ast.Call) else dec
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in ("jit", "autotune", "heuristics")


def _plain_value(node: ast.expr) -> bool:
    """A value the GPU compiler refuses as a global: a literal or arithmetic on literals and names."""
    if isinstance(node, ast.Constant):
        return not isinstance(node.value, type(None))
    if isinstance(node, ast.UnaryOp):
        return _plain_value(node.operand)
    if isinstance(node, ast.BinOp):
        return all(isinstance(n, (ast.Constant, ast.Name, ast.UnaryOp, ast.BinOp)) for n in (node.left, node.right))
    if isinstance(node, ast.Call):  # float("inf"), math.log2(math.e): still plain numbers
        f = node.func
        return (isinstance(f, ast.Name) and f.id in ("float", "int")) or \
            (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "math")
    return False


def _local_names(fn: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def non_constexpr_globals(source: str) -> list[str]:
    """One line per read of a plain (non-constexpr) module global inside a jitted function."""
    tree = ast.parse(source)
    plain: dict[str, int] = {}
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        value = getattr(node, "value", None)
        for t in targets:
            if isinstance(t, ast.Name) and value is not None and _plain_value(value):
                plain[t.id] = node.lineno
    problems = []
    for fn in tree.body:
        if not (isinstance(fn, ast.FunctionDef) and any(_is_jit(d) for d in fn.decorator_list)):
            continue
        local = _local_names(fn)
        seen = set()
        reads = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)),
                       key=lambda n: (n.lineno, n.col_offset))
        for node in reads:
            if node.id in plain and node.id not in local and node.id not in seen:
                seen.add(node.id)
                problems.append(f"line {node.lineno}: @triton.jit {fn.name} reads the global {node.id} (line "
                                f"{plain[node.id]}), which is not a tl.constexpr: the GPU compiler rejects it, "
                                "the interpreter does not")
    return problems
