"""Import KernelBench problems as mkbench tasks, and KernelBench ``ModelNew`` files as candidates.

``mkbench import kernelbench DIR --out TASKS_DIR [--category C] [--prefix kb_] [--shape-role large]
[--candidates CAND_DIR --solutions-out SOL_DIR [--sample N]]``

Problems (the KernelBench format, ScalingIntelligence/KernelBench ``KernelBench/level*/``): a Python
file defining ``class Model(nn.Module)`` built as ``Model(*get_init_inputs())`` and called as
``forward(*get_inputs())``, with module-level ``get_inputs()`` and ``get_init_inputs()``. DIR is
one such file, a folder of them, or a folder whose ``level<N>/`` subfolders hold them (the
KernelBench checkout's ``KernelBench/`` folder). Files starting with ``_`` are ignored.

For each problem ``<stem>.py`` the importer writes

* ``TASKS_DIR/<category>/_<task>_src.py``: a verbatim copy of the problem (the leading ``_``
  keeps the task loader from treating it as a task);
* ``TASKS_DIR/<category>/<task>.py``: a task file defining ``TASK``, whose runtime is
  :class:`ProblemRuntime` below.

Names: ``<task>`` = prefix (default ``kb_``) + ``l<N>_`` when the file sits in a ``level<N>``
folder + the file stem lower-cased with non-alphanumerics turned into ``_``; e.g.
``level1/19_ReLU.py`` -> ``kb_l1_19_relu``, a flat ``19_ReLU.py`` -> ``kb_19_relu``. Names must be
unique and must not collide with tasks already registered from elsewhere.

Category: ``--category`` for every problem, else inferred from the stem with the keyword table
:data:`TOKEN_CATEGORIES` (after merging phrases such as ``Max_Pooling`` or
``matrix_multiplication``): one recognised op gives its category, two or more (KernelBench level-2
names such as ``Conv2d_ReLU_BiasAdd``) give ``fusion``. A problem whose category cannot be
inferred is an error (exit 2, nothing written): level-3 network names (``11_VGG16``) need
``--category``.

What a generated task does:

* weights: ``torch.manual_seed(42)`` before ``get_init_inputs()`` and again before
  ``Model(*init_inputs)`` (KernelBench's ``eval_kernel_against_ref`` with its default seed 42;
  the same is done before ``ModelNew``), built on the CPU, then moved to the inputs' device and
  floating dtype (init-input tensors are moved first, as KernelBench does); one model per
  (device, dtype), cached. The model stays in training mode, as in KernelBench. ``forward`` runs
  under ``torch.no_grad()``.
* inputs: ``get_inputs()`` under ``torch.manual_seed(s)`` (and ``random``/``numpy`` seeded with
  ``s``), ``s`` drawn from mkbench's generator, with the worker's device as torch's default device
  (so tensors are created there); top-level tensors are then moved to the device and floating
  ones cast to the task dtype. Nested containers of tensors are passed through unchanged.
* shapes: KernelBench problems carry one set of sizes (module-level constants), so the task has
  one shape ``Shape("default", {...}, role)`` with role ``large`` by default (``--shape-role``):
  re-scaling the constants is not safe in general (they also set kernel sizes, strides,
  reduction dims). The CPU profile skips ``large`` shapes; use ``--shape-role standard`` for
  problems small enough to run on a CPU.
* dtypes ``("float32",)``; contract ``AllClose()`` (float64 reference, fp32 rtol 1e-4).
* flops: 0 (KernelBench carries no FLOP counts); bytes: every input read once and every output
  written once, measured by running the problem once on the ``meta`` device at import time
  (floating tensors counted at the task dtype); 0 when the problem cannot run on ``meta``.

Candidates (KernelBench ``ModelNew`` files, usually building CUDA with
``torch.utils.cpp_extension.load_inline``): with ``--candidates CAND_DIR --solutions-out SOL_DIR``,
each ``*.py`` under CAND_DIR (recursively) is matched to a problem by

* the same file name as the problem (``19_ReLU.py``), or
* the mkbench task name (``kb_19_relu.py``), or
* KernelBench's generation naming ``level_<L>_problem_<P>[_sample_<S>][_kernel].py`` (problem
  number ``P``; level ``L`` must match when the problem's level is known; only sample ``--sample``,
  default 0, is taken; other samples are counted and ignored).

and written to ``SOL_DIR/<category>/<task>.py``: the candidate's source verbatim, followed by a
footer that embeds the problem's source (for its ``get_init_inputs``) and defines
``kernel_function = model_new_kernel_function(ModelNew, ...)``: ``ModelNew`` is built once per
(device, dtype) with the same seed and init inputs as the reference, and called with the task's
inputs. Candidates that match no problem, and second candidates for one problem, are reported and
skipped (exit 3). A candidate with a syntax error is still written, so the run records it as a
compile error.

Not supported yet: problem files outside DIR / ``DIR/level<N>/``; other candidate naming schemes
(e.g. ``problem_<P>.py`` without a level, KernelBench-v2/v3 JSON result files, Hugging Face
dataset rows); more than one shape per problem; dtypes other than float32 (KernelBench's
``--precision fp16/bf16``); KernelBench's own tolerance (atol = rtol = 1e-4 on raw values, where
mkbench's AllClose scales atol by the output's RMS); FLOP counts; ``get_inputs()`` returning nested
containers of tensors (they are neither moved nor cast). Imported ``ModelNew`` / ``load_inline``
candidates are CUDA candidates: run them with ``--backend cuda`` (which also compiles them with
nvcc, without running, on a machine with no NVIDIA GPU).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import math
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import torch

from ..errors import BadInput
from ..task import CATEGORIES, SHAPE_ROLES
from . import WRAPPER_BANNER, ImportReport, check_identifier, identifier, write_file

#: KernelBench's default ``seed_num`` in ``eval_kernel_against_ref``: set before
#: ``get_init_inputs()``, before ``Model(...)`` and before ``ModelNew(...)``.
WEIGHT_SEED = 42

# ---------------------------------------------------------------------------------------------
# Runtime: used by generated task files and candidate wrappers (in the worker)
# ---------------------------------------------------------------------------------------------


def load_problem_module(path: str | Path):
    """Import a KernelBench problem (or any Python file) by path, once per process."""
    path = Path(path).resolve()
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    name = f"mkbench_kb_problem_{identifier(path.stem)}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def device_dtype(inputs: Iterable[Any]) -> tuple[torch.device, torch.dtype]:
    """The first tensor's device (CPU if none) and the first floating tensor's dtype (float32 if none)."""
    device, dtype = None, None
    for v in inputs:
        if isinstance(v, torch.Tensor):
            device = device or v.device
            if dtype is None and v.is_floating_point():
                dtype = v.dtype
    return device or torch.device("cpu"), dtype or torch.float32


def _to(v: Any, device: torch.device, dtype: torch.dtype) -> Any:
    if isinstance(v, torch.Tensor):
        v = v.to(device)
        if v.is_floating_point():
            v = v.to(dtype)
    return v


def _cuda_devices(device: torch.device) -> list[int]:
    if device.type != "cuda":
        return []
    return [device.index if device.index is not None else torch.cuda.current_device()]


def build_model(model_cls: type, init_inputs_fn: Callable[[], Any], device: torch.device | str,
                dtype: torch.dtype, seed: int = WEIGHT_SEED) -> torch.nn.Module:
    """KernelBench's construction: seed, ``get_init_inputs()`` (tensors moved to device/dtype), seed
    again, ``model_cls(*init_inputs)`` on the CPU, then ``.to(device, dtype)``. The global RNG
    state is restored afterwards."""
    device = torch.device(device)
    with torch.random.fork_rng(devices=_cuda_devices(device)), torch.no_grad():
        torch.manual_seed(seed)
        init = [_to(v, device, dtype) for v in init_inputs_fn()]
        torch.manual_seed(seed)
        model = model_cls(*init)
    return model.to(device=device, dtype=dtype)


class _ModelCache:
    def __init__(self, model_cls: Callable[[], type], init_inputs_fn: Callable[[], Callable], seed: int):
        self._model_cls, self._init_inputs_fn, self.seed = model_cls, init_inputs_fn, seed
        self._models: dict[tuple[str, torch.dtype], torch.nn.Module] = {}

    def __call__(self, *inputs):
        device, dtype = device_dtype(inputs)
        key = (str(device), dtype)
        model = self._models.get(key)
        if model is None:
            model = build_model(self._model_cls(), self._init_inputs_fn(), device, dtype, self.seed)
            self._models[key] = model
        with torch.no_grad():
            return model(*inputs)


def call_seeded(fn: Callable[[], Any], seed: int, device: torch.device | str) -> Any:
    """``fn()`` with torch, ``random`` and numpy seeded from ``seed`` and ``device`` as torch's
    default device; every global RNG state is restored afterwards."""
    device = torch.device(device)
    py_state = random.getstate()
    try:
        import numpy as np
        np_state = np.random.get_state()
    except ImportError:  # pragma: no cover
        np, np_state = None, None
    try:
        with torch.random.fork_rng(devices=_cuda_devices(device)):
            torch.manual_seed(seed)
            random.seed(seed)
            if np is not None:
                np.random.seed(seed % 2**32)
            with torch.device(device):
                return fn()
    finally:
        random.setstate(py_state)
        if np is not None:
            np.random.set_state(np_state)


class ProblemRuntime:
    """What a generated task file delegates to: the problem is imported lazily (listing tasks
    does not run problem code), models are built once per (device, dtype)."""

    def __init__(self, source: str | Path, task_name: str, seed: int = WEIGHT_SEED):
        self.source, self.task_name, self.seed = Path(source), task_name, seed
        self._module = None
        self._reference = _ModelCache(lambda: self.module.Model, lambda: self.module.get_init_inputs, seed)

    @property
    def module(self):
        if self._module is None:
            self._module = load_problem_module(self.source)
            for attr in ("Model", "get_inputs", "get_init_inputs"):
                if not hasattr(self._module, attr):
                    raise ImportError(f"{self.source}: KernelBench problem defines no `{attr}`")
        return self._module

    def reference(self, *inputs):
        return self._reference(*inputs)

    def make_inputs(self, shape, dtype: torch.dtype, gen: torch.Generator) -> tuple:
        from ..taskkit import seed_from
        seed = seed_from(gen)
        values = call_seeded(self.module.get_inputs, seed, gen.device)
        return tuple(_to(v, gen.device, dtype) for v in values)


def io_bytes(io: dict | None, dtype: torch.dtype) -> float:
    """Bytes moved according to a measured I/O description (see :func:`measure_io`)."""
    if not io:
        return 0.0
    itemsize = torch.empty((), dtype=dtype).element_size()
    total = 0
    for shape, is_float, own in io["inputs"] + io["outputs"]:
        size = itemsize if is_float else torch.empty((), dtype=getattr(torch, own)).element_size()
        total += math.prod(shape) * size
    return float(total)


def init_inputs_from_source(source: str, label: str) -> Callable[[], Any]:
    """A ``get_init_inputs`` taken from a problem's source text, executed once, lazily, in a
    namespace of its own (candidate wrappers embed the problem this way)."""
    ns: dict[str, Any] = {}

    def get_init_inputs():
        if not ns:
            ns.update(__name__=f"mkbench_kb_problem_{identifier(label)}", __builtins__=__builtins__)
            exec(compile(source, f"<KernelBench problem {label}>", "exec"), ns)
            if "get_init_inputs" not in ns:
                raise ImportError(f"KernelBench problem {label} defines no get_init_inputs")
        return ns["get_init_inputs"]()
    return get_init_inputs


def model_new_kernel_function(model_cls: type | None, init_inputs_fn: Callable[[], Any],
                              seed: int = WEIGHT_SEED) -> Callable[..., Any]:
    """The mkbench entry point for a KernelBench candidate: ``ModelNew`` built with the same seed
    and init inputs as the reference's ``Model`` (see :func:`build_model`), once per (device,
    dtype) of the inputs, then ``forward(*inputs)`` under ``torch.no_grad()``."""
    if model_cls is None:
        raise ImportError("the candidate defines no `ModelNew` class (a KernelBench candidate must)")
    if not isinstance(model_cls, type):
        raise ImportError(f"`ModelNew` is a {type(model_cls).__name__}, not a class")
    cache = _ModelCache(lambda: model_cls, lambda: init_inputs_fn, seed)

    def kernel_function(*inputs):
        return cache(*inputs)
    kernel_function.model_cls = model_cls  # type: ignore[attr-defined]
    return kernel_function


# ---------------------------------------------------------------------------------------------
# Import time: names, categories, file generation
# ---------------------------------------------------------------------------------------------

# Multi-word phrases of KernelBench level-1 names, merged into one token before classification.
PHRASES: list[tuple[str, str]] = [
    (r"matrix_vector_multiplication", "matvec"),
    (r"matrix_scalar_multiplication", "matscalar"),
    (r"matrix_multiplication", "matmul"),
    (r"max_pooling", "maxpool"),
    (r"(?:average|avg)_pooling", "avgpool"),
    (r"(sum|mean|max|min)_reduction", r"\1"),
    (r"product_reduction", "prod"),
    (r"scaled_dot_product_attention", "attention"),
    (r"cross_entropy", "crossentropy"),
    (r"layer_norm", "layernorm"),
    (r"batch_norm", "batchnorm"),
    (r"group_norm", "groupnorm"),
    (r"instance_norm", "instancenorm"),
]

#: token -> category; a token is one ``_``-separated word of the lower-cased stem, with a
#: trailing ``1d``/``2d``/``3d`` removed. Two or more op tokens make the problem a fusion.
TOKEN_CATEGORIES: dict[str, set[str]] = {
    "activation": {"relu", "leakyrelu", "gelu", "newgelu", "sigmoid", "hardsigmoid", "tanh", "hardtanh",
                   "softmax", "logsoftmax", "softmin", "swish", "silu", "selu", "elu", "celu", "softsign",
                   "softplus", "mish", "hardswish", "relu6", "prelu", "glu", "logsigmoid", "hardshrink",
                   "softshrink", "tanhshrink"},
    "normalization": {"batchnorm", "groupnorm", "layernorm", "instancenorm", "rmsnorm", "l1norm", "l2norm",
                      "frobeniusnorm", "norm", "normalize", "normalization", "localresponsenorm"},
    "convolution": {"conv", "convtranspose", "convolution", "deconv"},
    "matmul": {"matmul", "gemm", "bmm", "mm", "linear", "matvec", "gemv", "einsum", "addmm", "baddbmm"},
    "pooling": {"maxpool", "avgpool", "pool", "pooling", "globalavgpool", "adaptiveavgpool", "adaptivemaxpool",
                "lppool"},
    "loss": {"loss", "crossentropy", "kldiv", "hinge", "huber", "mse", "nll"},
    "reduce": {"sum", "mean", "max", "min", "argmax", "argmin", "prod", "logsumexp", "std", "var", "amax",
               "amin"},
    "math": {"cumsum", "cumprod", "cummax", "cummin", "scan", "matscalar", "exp", "log", "sqrt", "rsqrt", "abs",
             "clamp", "clip", "add", "biasadd", "bias", "subtract", "sub", "multiply", "mul", "divide", "div",
             "scale", "scaling", "residualadd", "pow", "reciprocal", "erf", "sign", "round", "floor", "ceil"},
    "index": {"gather", "scatter", "embedding", "indexselect", "index", "argsort", "sort", "topk"},
    "random": {"dropout", "rand", "randn", "bernoulli", "multinomial"},
    "spatial": {"upsample", "interpolate", "pixelshuffle", "pixelunshuffle", "gridsample", "affinegrid"},
    "linear_algebra": {"cholesky", "trsv", "trsm", "lu", "qr", "svd", "inverse", "solve", "det"},
    "quantization": {"quantize", "dequantize", "quant", "int8"},
    "optimizer": {"adam", "adamw", "sgd", "rmsprop", "adagrad"},
    "fusion": {"attention"},
}
_SUFFIX_RULES: list[tuple[str, str]] = [  # (suffix, category) for tokens not in the table
    ("loss", "loss"), ("attention", "fusion"), ("softmax", "activation"), ("norm", "normalization"),
    ("relu", "activation"), ("gelu", "activation"), ("sigmoid", "activation"), ("tanh", "activation"),
    ("pool", "pooling"), ("pooling", "pooling"),
]


def token_category(token: str) -> str | None:
    token = re.sub(r"[123]d$", "", token)
    for category, words in TOKEN_CATEGORIES.items():
        if token in words:
            return category
    if token.startswith("conv"):
        return "convolution"
    for suffix, category in _SUFFIX_RULES:
        if token.endswith(suffix):
            return category
    return None


def infer_category(stem: str) -> str | None:
    """mkbench category for a KernelBench file stem, or None when no op is recognised."""
    name = re.sub(r"^\d+_", "", stem).lower()
    name = re.sub(r"_+", "_", name).strip("_")
    for pattern, repl in PHRASES:
        name = re.sub(rf"(?<![a-z0-9]){pattern}(?![a-z0-9])", repl, name)
    ops = [c for c in (token_category(t) for t in name.split("_") if t) if c]
    if not ops:
        return None
    return "fusion" if len(ops) >= 2 else ops[0]


_LEVEL_DIR = re.compile(r"level[_-]?(\d+)", re.I)
_SAMPLE_NAME = re.compile(r"level_?(\d+)_problem_?(\d+)(?:_sample_?(\d+))?(?:_kernel)?", re.I)


@dataclass
class Problem:
    path: Path
    task: str
    category: str | None
    number: int | None
    level: int | None


def _problem_files(src: Path) -> list[Path]:
    if src.is_file():
        return [src]
    if not src.is_dir():
        raise BadInput(f"{src}: no such file or directory")
    files = list(src.glob("*.py"))
    for sub in sorted(src.iterdir()):
        if sub.is_dir() and _LEVEL_DIR.fullmatch(sub.name):
            files.extend(sub.glob("*.py"))
    files = [f for f in files if not f.name.startswith("_")]
    if not files:
        raise BadInput(f"{src}: no KernelBench problem files (*.py here or in level<N>/ subfolders)")
    return sorted(files)


def _static_problem(path: Path) -> str | None:
    """Why ``path`` is not a KernelBench problem (without running it), or None."""
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read: {exc}"
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in names]
    return f"defines no {', '.join(missing)} at top level" if missing else None


def _level_of(path: Path) -> int | None:
    m = _LEVEL_DIR.fullmatch(path.parent.name)
    return int(m.group(1)) if m else None


def task_name_for(path: Path, prefix: str = "kb_") -> str:
    level = _level_of(path)
    return f"{prefix}{f'l{level}_' if level is not None else ''}{identifier(path.stem)}"


def measure_io(module) -> dict | None:
    """Numels and dtypes of the problem's inputs and outputs, from one run on the meta device;
    None when the problem cannot run there (data-dependent code, .item(), numpy, ...)."""
    def describe(values) -> list:
        out = []
        for v in values:
            if isinstance(v, torch.Tensor):
                out.append([list(v.shape), bool(v.is_floating_point()), str(v.dtype).removeprefix("torch.")])
        return out
    try:
        with torch.device("meta"), torch.no_grad():
            inputs = list(module.get_inputs())
            model = module.Model(*module.get_init_inputs())
            outputs = model(*inputs)
        if not isinstance(outputs, (tuple, list)):
            outputs = [outputs]
        return {"inputs": describe(inputs), "outputs": describe(outputs)}
    except Exception:
        return None


def _shape_params(io: dict | None) -> dict[str, str]:
    if not io:
        return {}
    def fmt(items):
        return ", ".join("x".join(str(d) for d in shape) or "scalar" for shape, _, _ in items)
    return {"inputs": fmt(io["inputs"]), "outputs": fmt(io["outputs"])}


TASK_TEMPLATE = '''"""KernelBench problem {file!r}, imported by `mkbench import kernelbench` (mkbench.importers.kernelbench).

The problem's own source is {src_name}, next to this file. Weights: torch.manual_seed({seed}) before
get_init_inputs() and again before Model(*init_inputs), as KernelBench does before both Model and
ModelNew. Inputs: the problem's get_inputs() under a seed drawn from mkbench's generator. KernelBench
problems carry one set of sizes, so this task has a single shape (role {role!r}).
"""

from pathlib import Path

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.importers import kernelbench as _kb

_PROBLEM = _kb.ProblemRuntime(Path(__file__).with_name({src_name!r}), {task!r}, seed={seed})

# [shape, is floating, dtype] of every input and output tensor, measured once on the meta device
# at import time (None: the problem could not run there, so bytes() reports 0).
_IO = {io!r}


def reference(*inputs):
    return _PROBLEM.reference(*inputs)


def make_inputs(shape, dtype, gen):
    return _PROBLEM.make_inputs(shape, dtype, gen)


def flops(shape):
    return 0.0  # KernelBench carries no FLOP counts


def nbytes_moved(shape, dtype):
    return _kb.io_bytes(_IO, dtype)


TASK = Task(
    name={task!r},
    category={category!r},
    description={description!r},
    reference=reference,
    make_inputs=make_inputs,
    shapes=[Shape("default", {params!r}, {role!r})],
    dtypes=("float32",),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
'''

CANDIDATE_FOOTER = '''

{banner}
# KernelBench candidate {cand!r} for problem {problem!r}
# (mkbench task {task}). ModelNew is built as KernelBench builds it: torch.manual_seed({seed})
# before get_init_inputs() and before ModelNew(*init_inputs), init inputs from the problem's own
# source below.
import mkbench.importers.kernelbench as _mkbench_kb

_MKBENCH_KB_PROBLEM_SOURCE = {source!r}
kernel_function = _mkbench_kb.model_new_kernel_function(
    globals().get("ModelNew"), _mkbench_kb.init_inputs_from_source(_MKBENCH_KB_PROBLEM_SOURCE, {problem!r}), seed={seed})
'''


def candidate_module_source(candidate_source: str, problem_source: str, *, candidate: str, problem: str,
                            task: str, seed: int = WEIGHT_SEED) -> str:
    """A candidate module: the ModelNew source verbatim (line numbers unchanged) plus a footer
    defining ``kernel_function``."""
    return candidate_source.rstrip("\n") + "\n" + CANDIDATE_FOOTER.format(
        banner=WRAPPER_BANNER, cand=candidate, problem=problem, task=task, seed=seed, source=problem_source)


def _registered_elsewhere(out: Path) -> dict[str, str]:
    """Task name -> source of tasks registered now, except those generated under ``out``."""
    from ..plugins import build_registry
    out = out.resolve()
    taken = {}
    for name, task in build_registry().tasks.items():
        src = Path(task.source).resolve() if task.source else None
        if src is None or out not in src.parents:
            taken[name] = str(src) if src else "(in-process)"
    return taken


def import_problems(src: Path, out: Path, *, category: str | None = None, prefix: str = "kb_",
                    shape_role: str = "large", report: ImportReport | None = None) -> tuple[list[Problem], ImportReport]:
    """Write one task per problem under ``out``; return the problems written (for candidates)."""
    report = report or ImportReport()
    if category is not None and category not in CATEGORIES:
        raise BadInput(f"--category {category!r}: unknown (known: {', '.join(CATEGORIES)})")
    if shape_role not in SHAPE_ROLES:
        raise BadInput(f"--shape-role {shape_role!r}: must be one of {', '.join(SHAPE_ROLES)}")
    problems: list[Problem] = []
    for path in _problem_files(Path(src)):
        why = _static_problem(path)
        if why:
            report.skip(f"{path}: not a KernelBench problem: {why}")
            continue
        name = task_name_for(path, prefix)
        bad = check_identifier(name, str(path))
        if bad:
            raise BadInput(bad)
        m = re.match(r"(\d+)_", path.stem)
        problems.append(Problem(path, name, category or infer_category(path.stem),
                                int(m.group(1)) if m else None, _level_of(path)))
    unknown = [p.path.name for p in problems if p.category is None]
    if unknown:
        raise BadInput(f"cannot infer a category for {', '.join(unknown)}; pass --category (one of {', '.join(CATEGORIES)})")
    seen: dict[str, Path] = {}
    for p in problems:
        if p.task in seen:
            raise BadInput(f"{p.path} and {seen[p.task]} would both become task {p.task!r}")
        seen[p.task] = p.path
    taken = _registered_elsewhere(Path(out))
    clash = [f"{p.task} ({taken[p.task]})" for p in problems if p.task in taken]
    if clash:
        raise BadInput(f"task names already registered elsewhere: {', '.join(clash)}; use another --prefix")

    from ..task import load_task_file
    written = []
    for p in problems:
        try:
            module = load_problem_module(p.path)
        except Exception as exc:
            report.skip(f"{p.path}: problem failed to import: {type(exc).__name__}: {exc}")
            continue
        io = measure_io(module)
        folder = Path(out) / p.category
        src_name = f"_{p.task}_src.py"
        write_file(folder / src_name, p.path.read_text())
        description = f"KernelBench {('level ' + str(p.level) + ' ') if p.level is not None else ''}{p.path.name}"
        task_file = folder / f"{p.task}.py"
        write_file(task_file, TASK_TEMPLATE.format(
            file=p.path.name, src_name=src_name, seed=WEIGHT_SEED, role=shape_role, task=p.task, io=io,
            category=p.category, description=description, params=_shape_params(io)))
        try:
            load_task_file(task_file)
        except BadInput as exc:  # pragma: no cover - a generator bug, not a user error
            report.skip(f"{p.path}: generated task does not load: {exc}")
            continue
        report.wrote(f"task {p.task} ({p.category}) <- {p.path}: {task_file}"
                     + ("" if io else " [bytes unknown: the problem does not run on the meta device]"))
        written.append(p)
    return written, report


def _match_candidate(path: Path, problems: list[Problem], sample: int) -> tuple[Problem | None, str | None]:
    """(problem, None), (None, why-unmatched) or (None, None) for another sample."""
    stem = path.stem
    for p in problems:
        if stem == p.path.stem or stem == p.task:
            return p, None
    m = _SAMPLE_NAME.fullmatch(stem)
    if m:
        level, number = int(m.group(1)), int(m.group(2))
        if int(m.group(3) or 0) != sample:
            return None, None
        found = [p for p in problems if p.number == number and (p.level is None or p.level == level)]
        if len(found) == 1:
            return found[0], None
        if len(found) > 1:
            return None, f"problem number {number} is ambiguous ({', '.join(p.path.name for p in found)})"
        return None, f"no problem numbered {number}" + ("" if all(p.level is None for p in problems) else f" in level {level}")
    return None, "no problem with this file name, task name or level_<L>_problem_<P> name"


def import_candidates(cand_dir: Path, solutions_out: Path, problems: list[Problem], *, sample: int = 0,
                      report: ImportReport | None = None) -> ImportReport:
    report = report or ImportReport()
    cand_dir = Path(cand_dir)
    if cand_dir.is_file():
        files = [cand_dir]
    elif cand_dir.is_dir():
        files = sorted(cand_dir.rglob("*.py"))
    else:
        raise BadInput(f"--candidates {cand_dir}: no such file or directory")
    if not files:
        raise BadInput(f"--candidates {cand_dir}: no *.py files")
    taken: dict[str, Path] = {}
    other_samples = 0
    for path in files:
        problem, why = _match_candidate(path, problems, sample)
        if problem is None:
            if why is None:
                other_samples += 1
            else:
                report.skip(f"{path}: {why}")
            continue
        if problem.task in taken:
            report.skip(f"{path}: problem {problem.path.name} already has candidate {taken[problem.task]}")
            continue
        taken[problem.task] = path
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            report.skip(f"{path}: cannot read: {exc}")
            continue
        dest = Path(solutions_out) / problem.category / f"{problem.task}.py"
        write_file(dest, candidate_module_source(text, problem.path.read_text(), candidate=path.name,
                                                 problem=problem.path.name, task=problem.task))
        note = ""
        try:
            tree = ast.parse(text)
            if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body):
                note = " [defines no top-level class ModelNew: it will be a compile error]"
        except SyntaxError as exc:
            note = f" [syntax error at line {exc.lineno}: it will be a compile error]"
        report.wrote(f"candidate {problem.task} <- {path}: {dest}{note}")
    if other_samples:
        report.note(f"ignored {other_samples} candidate file(s) of samples other than {sample} (see --sample)")
    return report


def import_kernelbench(src: Path, out: Path, *, category: str | None = None, prefix: str = "kb_",
                       shape_role: str = "large", candidates: Path | None = None,
                       solutions_out: Path | None = None, sample: int = 0) -> ImportReport:
    if (candidates is None) != (solutions_out is None):
        raise BadInput("--candidates and --solutions-out go together")
    report = ImportReport()
    problems, report = import_problems(src, out, category=category, prefix=prefix, shape_role=shape_role, report=report)
    if candidates is not None:
        import_candidates(candidates, solutions_out, problems, sample=sample, report=report)
    return report


__all__ = ["ProblemRuntime", "WEIGHT_SEED", "build_model", "candidate_module_source", "import_kernelbench",
           "infer_category", "init_inputs_from_source", "io_bytes", "measure_io", "model_new_kernel_function",
           "task_name_for"]
