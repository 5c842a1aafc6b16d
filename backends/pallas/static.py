"""Static integrity checks specific to Pallas candidates, on top of ``mkbench.static_checks``.

The kernel is what ``pallas_call`` runs: the function passed to it (and the BlockSpec index maps),
plus every function of the file such a function refers to. Inside, anything goes. Outside, the
host code may allocate, reshape, cast, pad and slice, but must not compute with jax.numpy /
jax.lax / jax.nn / jax.scipy / jax.random, array methods or ``@``: that would be XLA doing the
work. ``jax.jit`` on the host code changes nothing (the generic scan treats any ``@...jit``
function as a kernel, which is right for Triton and wrong here). Host callbacks, JAX internals
and configuration changes are flagged everywhere.
"""

from __future__ import annotations

import ast

from mkbench.pyutil import dotted, import_aliases
from mkbench.static_checks import COMPUTE_METHODS, Finding, scan_python

COMPUTE_MODULES = ("jax.numpy", "jax.lax", "jax.nn", "jax.scipy", "jax.random", "jax.image", "jax.ops",
                   "jax.experimental.pallas.ops")
# What host code may call from those modules: allocation, views and reshapes, casts, padding and
# slicing (to handle awkward sizes), and dtype metadata.
ALLOWED_HOST = {
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "array", "asarray",
    "arange", "reshape", "ravel", "expand_dims", "squeeze", "broadcast_to", "atleast_1d", "atleast_2d", "astype",
    "convert_element_type", "bitcast_convert_type", "pad", "slice", "slice_in_dim", "dynamic_slice",
    "dynamic_slice_in_dim", "dtype", "finfo", "iinfo", "issubdtype", "result_type", "promote_types", "shape", "ndim",
    "size", "isdtype", "float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32", "uint64", "bool_",
}
HOST_CALLBACKS = {"jax.pure_callback", "jax.experimental.io_callback", "jax.debug.callback", "jax.device_get",
                  "jax.experimental.host_callback.call", "jax.experimental.host_callback.id_tap"}
MODULE_RECEIVERS = {"math", "numpy", "np", "operator", "builtins", "functools", "random", "jax", "pl", "plt"}


def kernel_nodes(tree: ast.Module, aliases: dict[str, str]) -> tuple[set[int], list[tuple[int, int]]]:
    """ids of every AST node that belongs to a kernel, and the line ranges of kernel functions.
    A kernel is named by the argument of ``pallas_call`` (or of ``BlockSpec``'s index map): a
    function, a lambda, ``functools.partial(f, ...)``, or a variable assigned any of those."""
    functions: dict[str, list[ast.AST]] = {}
    assigned: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned.setdefault(node.targets[0].id, []).append(node.value)
    todo: list[ast.AST | str] = []

    def name_in(expr: ast.AST) -> None:
        for inner in ast.walk(expr):
            if isinstance(inner, ast.Lambda):
                todo.append(inner)
            elif isinstance(inner, ast.Name):
                todo.append(inner.id)

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        last = (dotted(node.func, aliases) or "").split(".")[-1]
        if last in ("pallas_call", "kernel", "core_map"):
            arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "kernel"), None)
        elif last == "BlockSpec":
            arg = (node.args[1] if len(node.args) > 1
                   else next((k.value for k in node.keywords if k.arg == "index_map"), None))
        else:
            continue
        if arg is not None:
            name_in(arg)
    seen: set[int] = set()
    expanded: set[str] = set()
    ranges: list[tuple[int, int]] = []
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            if item not in functions:
                if item in assigned and item not in expanded:  # kernel = functools.partial(_kernel, ...)
                    expanded.add(item)
                    for value in assigned[item]:
                        name_in(value)
                continue
            bodies = functions[item]
        else:
            bodies = [item]
        for body in bodies:
            if id(body) in seen:
                continue
            if isinstance(body, (ast.FunctionDef, ast.AsyncFunctionDef)):
                ranges.append((body.lineno, body.end_lineno or body.lineno))
            for inner in ast.walk(body):
                seen.add(id(inner))
                # Functions of the file a kernel calls or passes on (loop bodies, helpers) are kernel code too.
                if isinstance(inner, ast.Name) and inner.id in functions:
                    todo.append(inner.id)
    return seen, ranges


class _HostScanner(ast.NodeVisitor):
    def __init__(self, aliases: dict[str, str], kernel: set[int]):
        self.aliases, self.kernel = aliases, kernel
        self.findings: list[Finding] = []

    def add(self, node: ast.AST, check: str, message: str) -> None:
        self.findings.append(Finding(check, getattr(node, "lineno", 0), message))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = dotted(node, self.aliases) or ""
        if name.startswith(("jax.core.", "jax._src")) or name == "jax.core":
            self.add(node, "introspection",
                     f"uses {name}: JAX internals (a call that behaves differently when traced fools the launch count)")
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if (node.module or "").startswith(("jax._src", "jax.core")):
            self.add(node, "introspection", f"imports {node.module}: JAX internals")

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.name.startswith(("jax._src", "jax.core")):
                self.add(node, "introspection", f"imports {a.name}: JAX internals")

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and id(node) not in self.kernel:
            self.add(node, "framework_op", "`@` matrix product outside a Pallas kernel")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = dotted(node.func, self.aliases) or ""
        last = name.split(".")[-1]
        if name in HOST_CALLBACKS or last in ("pure_callback", "io_callback"):
            self.add(node, "host_callback", f"calls {name}: work on the host, outside any kernel")
        elif name in ("jax.config.update", "jax.default_matmul_precision") or name.startswith("jax.config."):
            self.add(node, "patching", f"calls {name}: changes JAX's configuration for the harness too")
        elif id(node) not in self.kernel:
            if name.startswith(tuple(m + "." for m in COMPUTE_MODULES)):
                if last not in ALLOWED_HOST:
                    self.add(node, "framework_op", f"calls {name} outside a Pallas kernel")
            elif isinstance(node.func, ast.Attribute) and node.func.attr in COMPUTE_METHODS:
                receiver = dotted(node.func.value, self.aliases) or ""
                if receiver.split(".")[0] not in MODULE_RECEIVERS:
                    self.add(node, "framework_op", f"calls .{node.func.attr}() on an array outside a Pallas kernel")
        self.generic_visit(node)


def scan_pallas(source: str, filename: str = "<candidate>") -> list[Finding]:
    """The generic scan (framework-op findings inside kernel functions dropped: there, jnp.sum
    and `@` are the kernel's own instructions) plus the Pallas-specific checks above."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError:
        return []
    aliases = import_aliases(tree)
    kernel, ranges = kernel_nodes(tree, aliases)

    def in_kernel(line: int) -> bool:
        return any(a <= line <= b for a, b in ranges)

    findings = [f for f in scan_python(source, filename) if not (f.check == "framework_op" and in_kernel(f.line))]
    scanner = _HostScanner(aliases, kernel)
    scanner.visit(tree)
    unique: dict[tuple[int, str], Finding] = {}
    for f in sorted(scanner.findings + findings, key=lambda f: (f.line, f.check)):
        unique.setdefault((f.line, f.check), f)  # both scans may report the same host-side op
    return list(unique.values())
