"""Static integrity findings for Python-hosted CUDA and HIP candidates.

``mkbench.static_checks.scan_python`` was written for Triton, where a kernel never needs a raw
pointer or a stream handle. Three of its findings are the normal way to launch a CUDA kernel and
are lifted here, each only in its exact launch form:

* ``t.data_ptr()`` inside the argument tuple of a launch, ``kernel(grid, block, (..., t.data_ptr()))``
  (a data_ptr anywhere else, e.g. in a dict key, stays a caching finding);
* ``cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)``: torch's own stream
  (any other stream stays a stream finding);
* ``torch.from_dlpack`` / ``torch.utils.dlpack.from_dlpack``: a zero-copy view, not compute.

Imports of the backends' own loaders are allowed: ``from mkbench.backends.hip import load_module``
(HIP) and the footer ``mkbench import kernelbench`` appends to a KernelBench candidate.

Added for these languages: CuPy's array functions called from Python (``cupy.matmul``,
``cp.sum``...) and, inside the device/extension sources, ATen or vendor-library compute
(``torch::matmul``, ``at::relu``, ``x.sum()``, cuBLAS/cuDNN/rocBLAS/MIOpen calls), stream creation,
threads and sleeps.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from mkbench.pyutil import dotted, import_aliases
from mkbench.static_checks import COMPUTE_METHODS, Finding, scan_python

from .sources import Source, find

KERNELBENCH_FOOTER_IMPORT = "mkbench.importers.kernelbench"
# CuPy functions a wrapper may call: kernels, allocation, zero-copy views, dtypes, device handles.
CUPY_ALLOWED = {
    "RawKernel", "RawModule", "from_dlpack", "asarray", "ascontiguousarray", "empty", "empty_like", "zeros",
    "zeros_like", "ndarray", "dtype", "get_array_module", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "float16", "float32", "float64", "bool_",
}
# ATen functions a load_inline wrapper may call: allocation, metadata, streams and guards.
ATEN_ALLOWED = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "from_blob", "TensorOptions", "dtype", "device", "Device", "Tensor", "IntArrayRef", "ScalarType", "Scalar",
    "getCurrentCUDAStream", "getDefaultCUDAStream", "CUDAGuard", "OptionalCUDAGuard", "CUDAStreamGuard",
    "getCurrentHIPStream", "HIPGuard", "elementSize", "typeMetaToScalarType", "scalarTypeToTypeMeta", "toString",
}
ATEN_COMPUTE_NAMESPACES = {"nn", "functional", "linalg", "fft", "special", "native"}
_ATEN_CALL = re.compile(r"\b(?:torch|at)((?:::\w+)+)\s*\(")
_METHOD_CALL = re.compile(r"[\w\)\]]\s*(?:\.|->)\s*(\w+)\s*\(")
_VENDOR_LIB = re.compile(r"\b(cublas\w*|cublasLt\w*|cudnn\w*|cufft\w*|cusparse\w*|cusolver\w*|hipblas\w*|rocblas\w*"
                         r"|miopen\w*|hipfft\w*|rocfft\w*)\s*\(")
_STREAM = re.compile(r"\b(cudaStreamCreate\w*|hipStreamCreate\w*|getStreamFromPool)\s*\(")
_THREAD = re.compile(r"\b(std::thread|std::async|pthread_create)\b")
_SLEEP = re.compile(r"\b(usleep|nanosleep|sleep_for|sleep_until)\s*\(")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _blank_comments(code: str) -> str:
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


def _is_launch_args(node: ast.AST, parents: dict) -> bool:
    """Whether ``node`` is an element of the argument tuple of ``f(grid, block, (args...), ...)``
    (CuPy's and the HIP loader's launch form) or of ``args=(...)``."""
    seq = parents.get(node)
    if not isinstance(seq, (ast.Tuple, ast.List)):
        return False
    owner = parents.get(seq)
    if isinstance(owner, ast.keyword):
        return owner.arg == "args" and isinstance(parents.get(owner), ast.Call)
    return isinstance(owner, ast.Call) and len(owner.args) >= 3 and owner.args[2] is seq


def _is_torch_stream(node: ast.AST, aliases: dict[str, str]) -> bool:
    """``torch.cuda.current_stream(...).cuda_stream``."""
    return (isinstance(node, ast.Attribute) and node.attr == "cuda_stream" and isinstance(node.value, ast.Call)
            and dotted(node.value.func, aliases) == "torch.cuda.current_stream")


def _extension_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names bound to a load_inline(...) result, and attributes (self.X) bound to those names:
    calling ext.gelu(x) runs the candidate's own extension, not torch's gelu."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            f = node.value.func
            if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) == "load_inline":
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    attrs: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in names:
            attrs.update(t.attr for t in node.targets if isinstance(t, ast.Attribute))
    return names, attrs


def _is_extension(node: ast.AST, names: set[str], attrs: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in names
    return isinstance(node, ast.Attribute) and isinstance(node.value,
                                                          ast.Name) and node.value.id == "self" and node.attr in attrs


def _footer_start(text: str) -> int | None:
    from mkbench.importers import WRAPPER_BANNER
    lines = text.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip() == WRAPPER_BANNER:
            return i + 1
    return None


def python_findings(path: Path, allowed_imports: dict[str, set[str]] | None = None) -> list[Finding]:
    """scan_python's findings, with the launch idioms above lifted, plus CuPy compute calls.
    ``allowed_imports`` maps a module to the names a candidate may import from it."""
    text = Path(path).read_text()
    findings = scan_python(text, str(path))
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError:
        return findings
    aliases, parents = import_aliases(tree), _parents(tree)
    allowed_imports = allowed_imports or {}

    ok_data_ptr: dict[int, bool] = {}   # line -> every data_ptr() on it is a launch argument
    ok_stream: dict[int, bool] = {}     # line -> every stream call on it is torch's current stream
    ok_import: set[int] = set()
    ok_ext_call: set[tuple[int, str]] = set()  # (line, name): a call of a load_inline extension's function
    extra: list[Finding] = []
    footer = _footer_start(text)
    ext_names, ext_attrs = _extension_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = dotted(node.func, aliases) or ""  # a call of a call or subscript: no name
            last = name.rsplit(".", 1)[-1]
            if isinstance(node.func, ast.Attribute) and _is_extension(node.func.value, ext_names, ext_attrs):
                ok_ext_call.add((node.lineno, node.func.attr))
            if isinstance(node.func, ast.Attribute) and node.func.attr == "data_ptr":
                ok_data_ptr[node.lineno] = ok_data_ptr.get(node.lineno, True) and _is_launch_args(node, parents)
            elif last in ("Stream", "ExternalStream", "stream") and name.split(".")[0] in ("torch", "cupy"):
                blessed = last == "ExternalStream" and bool(node.args) and _is_torch_stream(node.args[0], aliases)
                ok_stream[node.lineno] = ok_stream.get(node.lineno, True) and blessed
            elif (name.startswith("cupy.") and not name.startswith("cupy.cuda.")
                  and name.split(".")[1] not in CUPY_ALLOWED):
                extra.append(Finding("framework_op", node.lineno,
                                     f"calls {name}: CuPy's own compute, not a kernel of the candidate"))
            elif name.startswith("cupyx."):
                extra.append(Finding("framework_op", node.lineno,
                                     f"calls {name}: CuPy's library compute, not a kernel of the candidate"))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and node.module in allowed_imports and \
                    all(a.name in allowed_imports[node.module] for a in node.names):
                ok_import.add(node.lineno)
            if isinstance(node, ast.Import) and footer is not None and node.lineno > footer and \
                    [a.name for a in node.names] == [KERNELBENCH_FOOTER_IMPORT]:
                ok_import.add(node.lineno)

    def keep(f: Finding) -> bool:
        if f.check == "caching" and "data_ptr()" in f.message:
            return not ok_data_ptr.get(f.line, False)
        if f.check == "stream":
            return not ok_stream.get(f.line, False)
        if f.check == "framework_op" and re.search(r"calls torch(\.utils\.dlpack)?\.from_dlpack ", f.message):
            return False
        if f.check == "harness_access":
            return f.line not in ok_import
        if f.check == "framework_op":
            m = re.fullmatch(r"calls \.(\w+)\(\) on a tensor outside a kernel", f.message)
            return not (m and (f.line, m.group(1)) in ok_ext_call)
        return True

    return sorted(set(filter(keep, findings)) | set(extra), key=lambda f: (f.line, f.check))


def findings(path: Path, language: str, allowed_imports: dict[str, set[str]] | None = None) -> list[Finding]:
    """A candidate's static integrity findings: python_findings over the file, and source_findings
    over its ``language`` ("cuda" or "hip") sources where the file parses."""
    found_in_python = python_findings(path, allowed_imports)
    try:
        found = find(path, language)
    except (SyntaxError, OSError, UnicodeDecodeError):
        return found_in_python
    return sorted(set(found_in_python) | set(source_findings(found.sources)), key=lambda f: (f.line, f.check))


def source_findings(sources: list[Source]) -> list[Finding]:
    """Findings inside device and extension sources (comments ignored). Lines are file lines
    where the source's lines map onto the file, else the line the source starts on."""
    out: list[Finding] = []
    for src in sources:
        code = _blank_comments(src.text)
        for i, line in enumerate(code.splitlines(), start=0):
            at = src.line + i if src.exact else src.line
            for m in _ATEN_CALL.finditer(line):
                path = m.group(1).strip(":").split("::")
                if set(path[:-1]) & ATEN_COMPUTE_NAMESPACES or (path[-1] not in ATEN_ALLOWED and "cuda" not in path[:-1]
                                                                and "hip" not in path[:-1]):
                    called = m.group(0).rstrip('( ')
                    out.append(Finding("framework_op", at,
                                       f"{src.label}: calls {called}: ATen compute instead of a kernel"))
            for m in _METHOD_CALL.finditer(line):
                if m.group(1) in COMPUTE_METHODS and src.kind in ("load_inline", "cpp"):
                    out.append(Finding("framework_op", at,
                                       f"{src.label}: calls .{m.group(1)}() on a tensor instead of a kernel"))
            for m in _VENDOR_LIB.finditer(line):
                out.append(Finding("framework_op", at,
                                   f"{src.label}: calls {m.group(1)}: a vendor library does the work"))
            for m in _STREAM.finditer(line):
                out.append(Finding("stream", at, f"{src.label}: calls {m.group(1)}: "
                                                 "work on another stream is invisible to the timer"))
            for m in _THREAD.finditer(line):
                out.append(Finding("threads", at,
                                   f"{src.label}: uses {m.group(1)}: work in another thread escapes the timer"))
            for m in _SLEEP.finditer(line):
                out.append(Finding("sleep", at, f"{src.label}: calls {m.group(1)}"))
    return out


__all__ = ["findings", "python_findings", "source_findings"]
