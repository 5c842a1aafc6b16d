"""Static checks on Python-hosted candidate sources, run before anything executes.

A finding names the check, the line and what was seen. The rules follow the cheats recorded in
MEASUREMENT.md: framework compute where a kernel is required, fallbacks, hidden streams and
threads, lazy tensor subclasses, patching of timers or harness objects, results cached across
calls, sleeping, and reaching into the harness's process state. Code inside kernel functions
(decorated ``@triton.jit`` and friends) is the kernel itself and is not scanned for framework ops.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass

from .pyutil import dotted, import_bindings

FRAMEWORK_MODULES = {"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.nn"}
# Allocation, views, metadata and device management: what a kernel wrapper legitimately calls.
ALLOWED_TORCH = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "arange", "tensor", "as_strided", "Size", "device", "dtype", "finfo", "iinfo", "is_tensor", "no_grad",
    "inference_mode", "get_default_dtype", "Generator", "manual_seed", "float16", "float32", "float64",
    "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool", "float8_e4m3fn", "float8_e5m2",
    "cuda", "version", "current_device", "get_device_capability", "get_device_properties", "device_count",
    "is_available", "synchronize", "current_stream", "set_device", "empty_cache",
}
# Tensor methods that compute a result (anything a wrapper could use instead of a kernel).
COMPUTE_METHODS = {
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "cumsum", "cumprod", "sort",
    "argsort", "topk", "exp", "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "sigmoid", "tanh",
    "relu", "gelu", "silu", "erf", "softmax", "log_softmax", "matmul", "mm", "bmm", "addmm", "baddbmm",
    "mul", "mul_", "add", "add_", "sub", "sub_", "div", "div_", "pow", "clamp", "clamp_", "clip", "abs",
    "neg", "masked_fill", "masked_fill_", "index_select", "gather", "scatter", "scatter_", "scatter_add",
    "index_add", "index_add_", "round", "floor", "ceil", "norm", "var", "std", "unfold", "roll", "flip",
    "repeat", "tile", "copy_", "lerp", "addcmul", "addcdiv", "where", "logsumexp", "cross_entropy",
    "layer_norm", "conv1d", "conv2d", "conv3d", "einsum", "tril", "triu", "diag", "outer", "dot", "bernoulli",
    "bernoulli_", "uniform_", "normal_", "multinomial", "nonzero", "unique", "bincount", "histc",
}
KERNEL_DECORATORS = {"jit", "autotune", "heuristics", "kernel", "njit", "pallas_call"}
THREAD_MODULES = {"threading", "multiprocessing", "concurrent", "_thread", "asyncio"}
INTROSPECTION = {"gc", "inspect", "ctypes", "sys._getframe", "importlib"}
PATCHABLE_ROOTS = {"torch", "time", "triton", "mkbench", "numpy", "np", "sys", "builtins", "gc", "os", "jax", "cupy"}


@dataclass(frozen=True)
class Finding:
    check: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.check}: {self.message}"

    def as_dict(self) -> dict:
        return asdict(self)


class _Scanner(ast.NodeVisitor):
    def __init__(self):
        self.findings: list[Finding] = []
        self.aliases: dict[str, str] = {}  # local name -> module path
        self.module_level_names: set[str] = set()
        self.kernel_depth = 0
        self.function_depth = 0

    def add(self, node: ast.AST, check: str, message: str) -> None:
        self.findings.append(Finding(check, getattr(node, "lineno", 0), message))

    def resolve(self, name: str | None) -> str | None:
        if name is None:
            return None
        head, _, rest = name.partition(".")
        base = self.aliases.get(head)
        if base is None:
            return name
        return f"{base}.{rest}" if rest else base

    # --- imports -----------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        self.aliases.update(import_bindings(node))
        for alias in node.names:
            self._check_module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        self._check_module(node, module)
        self.aliases.update(import_bindings(node))
        for alias in node.names:
            self._check_module(node, f"{module}.{alias.name}")

    def _check_module(self, node: ast.AST, module: str) -> None:
        root = module.split(".")[0]
        if root in THREAD_MODULES:
            self.add(node, "threads", f"imports {module}: work in other threads or processes escapes the timer")
        elif root == "mkbench":
            self.add(node, "harness_access", f"imports {module}: candidates must not reach into the harness")
        elif root in ("gc", "inspect", "ctypes") or module == "sys._getframe":
            self.add(node, "introspection", f"imports {module}: can reach the harness's objects or native memory")

    # --- definitions ---------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        decorators = {(dotted(d.func if isinstance(d, ast.Call) else d) or "").split(".")[-1]
                      for d in node.decorator_list}
        if decorators & {"lru_cache", "cache", "cached_property"}:
            self.add(node, "caching", f"function {node.name} memoises its results across calls")
        if node.name in ("__torch_function__", "__torch_dispatch__"):
            self.add(node, "tensor_subclass", f"defines {node.name}: outputs could be lazy or intercepted")
        is_kernel = bool(decorators & KERNEL_DECORATORS)
        self.kernel_depth += is_kernel
        self.function_depth += 1
        self.generic_visit(node)
        self.function_depth -= 1
        self.kernel_depth -= is_kernel

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            name = self.resolve(dotted(base)) or ""
            if name.endswith("Tensor"):
                self.add(node, "tensor_subclass", f"class {node.name} subclasses {name}: outputs must be plain tensors")
        self.generic_visit(node)

    # --- statements ----------------------------------------------------------------
    def visit_Try(self, node: ast.Try) -> None:
        if not self.kernel_depth and node.handlers:
            self.add(node, "fallback", "try/except around candidate code: a fallback path may do the work")
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def _check_target(self, node: ast.AST, target: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            name = self.resolve(dotted(target))
            if name and name.split(".")[0] in PATCHABLE_ROOTS:
                self.add(node, "patching", f"assigns to {name}")
        elif isinstance(target, ast.Subscript):
            base = dotted(target.value)
            if base in self.module_level_names and self.function_depth:
                self.add(node, "caching", f"stores into module-level {base} from a function: results kept across calls")
            resolved = self.resolve(base) or ""
            if resolved in ("sys.modules", "os.environ"):
                self.add(node, "patching", f"assigns into {resolved}")
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._check_target(node, elt)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_target(node, target)
            if (not self.function_depth and isinstance(target, ast.Name)
                    and isinstance(node.value, (ast.Dict, ast.List, ast.Set, ast.Call))):
                if not isinstance(node.value, ast.Call) or (dotted(node.value.func) or "") in (
                        "dict", "list", "set", "collections.OrderedDict", "OrderedDict", "defaultdict",
                        "collections.defaultdict"):
                    self.module_level_names.add(target.id)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_target(node, node.target)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.add(node, "caching",
                 f"rebinds module-level {', '.join(node.names)} from a function: state kept across calls")

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and not self.kernel_depth:
            self.add(node, "framework_op", "`@` matrix product outside a kernel")
        self.generic_visit(node)

    # --- calls -----------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        raw = dotted(node.func)
        name = self.resolve(raw) or ""
        last = name.split(".")[-1]
        if name in ("eval", "exec", "compile", "__import__", "importlib.import_module"):
            self.add(node, "dynamic_code", f"calls {name}: code the scan cannot see")
        elif name in ("setattr", "delattr") and node.args:
            target = self.resolve(dotted(node.args[0])) or ""
            if target.split(".")[0] in PATCHABLE_ROOTS:
                self.add(node, "patching", f"{name} on {target}")
        elif (name == "getattr" and node.args
              and (self.resolve(dotted(node.args[0])) or "").split(".")[0] in ("torch", "mkbench")):
            self.add(node, "dynamic_code",
                     f"getattr on {self.resolve(dotted(node.args[0]))}: a framework op chosen at run time")
        elif name in ("time.sleep", "asyncio.sleep"):
            self.add(node, "sleep", "sleeps: can shrink the timed sample or wait for hidden work")
        elif name == "id" or last == "data_ptr" and self._in_key_position(node):
            self.add(node, "caching", f"uses {last}() as an identity: results can be cached by input identity")
        elif last in ("Stream", "ExternalStream", "stream") and name.split(".")[0] in ("torch", "cupy", "cp"):
            self.add(node, "stream", f"calls {name}: work on another stream is invisible to the timer's events")
        elif last in ("Thread", "Process", "ThreadPoolExecutor", "ProcessPoolExecutor", "fork", "start_new_thread"):
            self.add(node, "threads", f"calls {name}: work in another thread or process escapes the timer")
        elif name.split(".")[0] == "gc" or name.startswith("sys._getframe") or name.split(".")[0] == "inspect":
            self.add(node, "introspection", f"calls {name}")
        elif name == "torch.backends.cudnn.flags" and _turns_cudnn_off(node):
            self.add(node, "cudnn_off", "torch.backends.cudnn.flags() without enabled=True turns cuDNN off inside "
                                        "the block (`enabled` defaults to False): convolutions run PyTorch's slow "
                                        "fallbacks")
        elif not self.kernel_depth:
            module = name.rsplit(".", 1)[0] if "." in name else ""
            if (module in FRAMEWORK_MODULES or name.startswith("torch.nn.functional.")
                    or name.startswith("torch.linalg.")):
                if last not in ALLOWED_TORCH and not name.startswith("torch.cuda."):
                    self.add(node, "framework_op", f"calls {name} outside a kernel")
            elif isinstance(node.func, ast.Attribute) and node.func.attr in COMPUTE_METHODS:
                receiver = self.resolve(dotted(node.func.value)) or ""
                if receiver.split(".")[0] not in ("math", "triton", "tl", "triton.language", "np", "numpy", "cupy",
                                                  "cp", "operator", "builtins", "random"):
                    self.add(node, "framework_op", f"calls .{node.func.attr}() on a tensor outside a kernel")
        self.generic_visit(node)

    def _in_key_position(self, node: ast.Call) -> bool:
        # Conservatively: data_ptr() anywhere outside a kernel launch's argument list is a key.
        return True


def _turns_cudnn_off(call: ast.Call) -> bool:
    """Whether a ``torch.backends.cudnn.flags(...)`` call disables cuDNN: ``enabled`` (its first
    parameter) left out, or given as the constant False. CUDA-L1's released cudnn-variant code leaves it
    out in 102 of 250 kernels, meaning to set ``benchmark`` (reports/2026-11-28-cuda-l1); 65 of them in
    a call this scan reads, the others through a dict (``**flags``), which it does not follow."""
    given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "enabled"), None)
    if given is None:
        return not any(k.arg is None for k in call.keywords)  # **kwargs may carry it
    return isinstance(given, ast.Constant) and given.value is False


def scan_python(source: str, filename: str = "<candidate>") -> list[Finding]:
    """Findings for one candidate source; a file that does not parse yields none (the compile
    stage reports it)."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError:
        return []
    scanner = _Scanner()
    scanner.visit(tree)
    return sorted(set(scanner.findings), key=lambda f: (f.line, f.check))
