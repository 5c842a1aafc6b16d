"""Static checks for OpenCL candidates: the Python host code is scanned like any Python-hosted
candidate (``scan_python``), plus what is particular to pyopencl: computing with pyopencl.array or
its library kernels (framework ops, as torch ops are for Triton), reading device data back to
compute on the host with numpy, queues and programs of the candidate's own, patching pyopencl, and
reaching past it into the SYCL path's runtime (dpctl, the facade's ``_mkb_`` internals).
"""

from __future__ import annotations

import ast
from pathlib import Path

from mkbench.pyutil import dotted as _dotted
from mkbench.pyutil import import_bindings
from mkbench.static_checks import Finding, scan_python

# pyopencl.array functions that only allocate or move data; everything else there computes.
ALLOCATION = {"empty", "empty_like", "zeros", "zeros_like", "to_device", "Array"}
# Modules whose calls run pyopencl's own generated kernels (or host-side RNG).
LIBRARY_MODULES = ("pyopencl.clmath", "pyopencl.elementwise", "pyopencl.reduction", "pyopencl.scan",
                   "pyopencl.algorithm", "pyopencl.bitonic_sort", "pyopencl.clrandom")
# Array methods that launch pyopencl's kernels to compute.
ARRAY_COMPUTE = {"astype", "dot", "vdot", "mul_add", "any", "all", "conj", "conjugate", "cumsum", "sum", "max", "min"}
# Host numpy computation (after a readback): a decoy computes the answer this way.
NUMPY_COMPUTE = {"erf", "tanh", "exp", "log", "log1p", "expm1", "sqrt", "matmul", "dot", "einsum", "cumsum", "maximum",
                 "minimum", "where", "mean", "var", "std", "sort", "argsort", "take", "clip", "round", "rint",
                 "multiply",
                 "add", "subtract", "divide", "true_divide", "power", "sum", "amax", "amin", "max", "min", "abs",
                 "absolute", "argmax", "argmin", "logaddexp", "tensordot", "inner", "outer", "convolve", "pad"}
READBACK = {"map_to_host", "enqueue_read_buffer", "enqueue_map_buffer", "enqueue_read_buffer_rect"}
OWN_RUNTIME = {"CommandQueue": "creates its own command queue: its work is invisible to the timer's events",
               "Context": "creates its own OpenCL context", "create_some_context": "creates its own OpenCL context",
               "Program": "builds a program of its own: kernels must come from OPENCL_SOURCE, built by the backend"}
PROGRAM_NAMES = {"prog", "program", "prg", "kernels"}


class _Scanner(ast.NodeVisitor):
    def __init__(self):
        self.findings: list[Finding] = []
        self.aliases: dict[str, str] = {}
        self.program_names = set(PROGRAM_NAMES)
        self.kernel_calls: set[tuple[int, str]] = set()  # (line, attr) of prog.<kernel>(...) launches

    def add(self, node, check: str, message: str) -> None:
        self.findings.append(Finding(check, getattr(node, "lineno", 0), message))

    def resolve(self, dotted: str | None) -> str:
        if not dotted:
            return ""
        head, _, rest = dotted.partition(".")
        base = self.aliases.get(head, head)
        return f"{base}.{rest}" if rest else base

    def _runtime_import(self, node, module: str) -> None:
        if module.split(".")[0] == "dpctl":
            self.add(node, "harness_access",
                     f"imports {module}: the SYCL queue, programs and memory are the backend's; "
                                             "candidates use the pyopencl API")

    def visit_Import(self, node):
        self.aliases.update(import_bindings(node))  # in visiting order: what a name means at this line
        for a in node.names:
            self._runtime_import(node, a.name)
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        self.aliases.update(import_bindings(node))
        self._runtime_import(node, node.module or "")
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if node.attr.startswith("_mkb_"):
            self.add(node, "harness_access", f"reads .{node.attr}: the backend's own objects behind the pyopencl API")
        self.generic_visit(node)

    def visit_FunctionDef(self, node):
        if node.args.args:  # the first parameter of the entry point (and of helpers) is the program
            if node.name in ("kernel_function",) or node.args.args[0].arg in PROGRAM_NAMES:
                self.program_names.add(node.args.args[0].arg)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def _target(self, node, target):
        if isinstance(target, ast.Attribute) and self.resolve(_dotted(target)).startswith("pyopencl"):
            self.add(node, "patching", f"assigns to {self.resolve(_dotted(target))}")
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._target(node, t)

    def visit_Assign(self, node):
        for t in node.targets:
            self._target(node, t)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._target(node, node.target)
        self.generic_visit(node)

    def visit_Call(self, node):
        raw = _dotted(node.func)
        name = self.resolve(raw)
        last = name.rsplit(".", 1)[-1]
        module = name.rsplit(".", 1)[0] if "." in name else ""
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value,
                                                               ast.Name) and node.func.value.id in self.program_names:
            self.kernel_calls.add((node.lineno, node.func.attr))
        elif name in ("setattr",
                      "delattr") and node.args and self.resolve(_dotted(node.args[0])).startswith("pyopencl"):
            self.add(node, "patching", f"{name} on {self.resolve(_dotted(node.args[0]))}")
        elif module == "pyopencl.array" and last not in ALLOCATION:
            self.add(node, "framework_op", f"calls {name}: pyopencl's own kernels compute, not the candidate's")
        elif any(name.startswith(m + ".") for m in LIBRARY_MODULES):
            self.add(node, "framework_op", f"calls {name}: pyopencl's library kernels compute, not the candidate's")
        elif module.startswith("pyopencl") and last in OWN_RUNTIME:
            self.add(node, "queue" if last == "CommandQueue" else "program", f"calls {name}: {OWN_RUNTIME[last]}")
        elif last in READBACK or (last == "get" and isinstance(node.func, ast.Attribute) and not node.args
                                  and all(k.arg in ("queue", "ary", "async_") for k in node.keywords)):
            self.add(node, "host_readback", f"calls {raw}: device data read back to the host inside the candidate")
        elif name in ("pyopencl.enqueue_copy",) and any(
                self.resolve(_dotted(a.func if isinstance(a, ast.Call) else a)).startswith("numpy")
                for a in node.args[1:2]):
            self.add(node, "host_readback", "enqueue_copy into a numpy array: device data read back to the host")
        elif module.startswith("numpy") and (last in NUMPY_COMPUTE or module.startswith("numpy.random")):
            self.add(node, "framework_op", f"calls {name}: computation on the host with numpy")
        elif isinstance(node.func,
                        ast.Attribute) and last in ARRAY_COMPUTE and not module.startswith(("numpy", "math")):
            self.add(node, "framework_op", f"calls .{last}(): pyopencl.array computation outside a kernel")
        self.generic_visit(node)


def scan_opencl_host(source: str, filename: str = "<candidate>") -> list[Finding]:
    """``scan_python`` findings plus the pyopencl-specific ones. Kernel launches written as
    ``prog.<kernel>(queue, ...)`` are not framework ops, even when the kernel is named like one
    (``prog.gelu``, ``prog.cumsum``)."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError:
        return []
    scanner = _Scanner()
    scanner.visit(tree)
    launches = scanner.kernel_calls
    generic = [f for f in scan_python(source, filename)
               if not (f.check == "framework_op"
                       and any(line == f.line and f"calls .{attr}()" in f.message for line, attr in launches))]
    ours = [f for f in scanner.findings if f.check != "framework_op" or
            not any(line == f.line and f".{attr}()" in f.message for line, attr in launches)]
    # scan_python's method rule and ours can both fire on one call: keep one per line and check,
    # ours first (it names the pyopencl function).
    seen, out = set(), []
    for f in ours + generic:
        if (f.line, f.check) not in seen:
            seen.add((f.line, f.check))
            out.append(f)
    return sorted(out, key=lambda f: (f.line, f.check))


def scan_file(path: Path) -> list[Finding]:
    return scan_opencl_host(Path(path).read_text(), str(path))
