"""Import KernelBench-X predictions as mkbench candidates, and KernelBench-X task files as tasks.

KernelBench-X (Wang et al. 2026, github.com/BonnieW05/KernelBenchX) evaluates Triton kernels. Its
task files (``data/kernelbenchx/<Category>/<task>.py``) hold a PyTorch reference function named
after the task, a line of 146 ``#`` characters, and a test harness ``test_<task>()`` that calls the
task function on fixed and random inputs and collects the outputs in a dict (``results = {};
results["test_case_1"] = ...; return results``), followed by ``test_results = test_<task>()``.
Predictions must define a top-level ``kernel_function`` or ``<task>`` (KernelBench-X's own
"kernel entry contract", which is also mkbench's Python-hosted candidate contract).

Predictions: ``mkbench import kernelbench-x PATH --out SOL_DIR [--prefix P] [--tasks-dir D]``

PATH is, as in KernelBench-X's ``EVAL/0_call_acc.py --source``:

* a JSONL file, one object per line ``{"file": "<Category>/<task>.py", "predict": "<code>"}``;
  the code may be wrapped in Markdown fences: the first fenced block is taken (a ```` ```python ````
  block first; an unterminated fence runs to the end), and ``<|im_end|>``/``<|EOT|>`` are removed;
* a single ``.py`` file whose base name is the task;
* a folder, searched recursively for ``*.py`` and ``*.jsonl`` files, each handled as above.

In every case only the code above a 146-``#`` separator line is kept. Each prediction for task
``<task>`` becomes ``SOL_DIR/<category>/<P><task>.py`` when mkbench's registry
(``mkbench.plugins.build_registry()``, plus ``--tasks-dir`` folders) has a task named
``<P><task>`` (prefix ``P`` empty by default); ``<category>`` is that task's category. The
KernelBench-X category in ``file`` is mapped with :data:`CATEGORY_MAP` and only used to warn when
it disagrees with the registry. Predictions for unknown tasks, unreadable lines, lines without a
``file`` field, and second predictions for one task are reported (one line each) and skipped;
the command then exits with status 3 (0 when nothing was skipped).

For an ordinary mkbench task the prediction is written verbatim: it is called with that task's
inputs (mkbench's calling convention for the same-named task; a KernelBench-X signature that
differs shows up as an ``error`` verdict). For a task made by ``--as-tasks`` (below) the
prediction is followed by a five-line footer (below :data:`mkbench.importers.WRAPPER_BANNER`)
defining ``kernel_function(seed, run_harness)``, which returns ``run_harness(seed, impl)`` with
``impl`` the prediction's ``<task>`` (else its ``kernel_function``). The footer imports nothing: the
harness comes from the task's inputs, so a prediction carries no copy of it and is not tied to
mkbench's modules. A prediction defining neither gets no footer (the run reports it invalid).

Task files: ``mkbench import kernelbench-x TASKFILE_OR_DIR --as-tasks --out TASKS_DIR
[--category C] [--prefix kbx_] [--shape-role standard]``

Each KernelBench-X task file ``<task>.py`` (a folder is searched recursively) becomes task
``<prefix><task>`` (prefix ``kbx_`` by default, so it never collides with mkbench's own tasks of
the same name) in ``TASKS_DIR/<category>/``, ``<category>`` being ``--category`` or the file's
folder name mapped with :data:`CATEGORY_MAP`:

* ``_<name>_ref.py``: the part above the separator; it must define ``<task>``;
* ``_<name>_harness.py``: the part below it, without its module-level ``test_results = ...``
  call (and ``print``s of it, ``if __name__ == "__main__"`` blocks);
* ``<name>.py``: the task. KernelBench-X files have no input generator, so the task's inputs are
  a one-element int64 seed tensor on the worker's device and a function ``run_harness(seed,
  impl)`` (a Python object: the pipeline passes non-tensor inputs through untouched).
  ``reference(seed, run_harness)`` runs the harness (:class:`Harness`; its own instance, not the
  function handed to the candidate) with the reference function: torch, ``random`` and numpy seeded with the
  seed, autograd enabled, the harness source executed in a fresh namespace whose ``__file__`` is
  the original KernelBench-X file (so its ``sys.path`` additions for ``utils/data_utils.py``
  resolve in a KernelBench-X checkout), ``<task>`` bound to the function under test, then
  ``test_<task>()`` called. Its result is flattened into a tuple of tensors in sorted-key order
  (lists and tuples in order, nested dicts by sorted key; Python bools/ints/floats become
  bool/int64/float32 tensors on the device, strings uint8 tensors of their UTF-8 bytes, None an
  empty tensor). The candidate side runs the same harness with the prediction's function, so the
  run compares every collected output with ``AllClose(reference_precision=None)`` (fp32 rtol 1e-4,
  atol 1e-5 x RMS; fp16/bf16 looser; integer and bool outputs exactly).
  ``--seeds N`` runs the harness under N different seeds. One shape, ``harness``, role
  ``standard`` by default. flops and bytes are 0. Timings cover the whole harness, input creation
  included, so they are not kernel timings.
* Device: in both parts the string literals ``"cuda"``/``"cuda:N"`` become the worker's device,
  ``x.cuda()`` becomes ``x.to(device)`` and ``torch.cuda.synchronize()`` a synchronisation of
  that device (so the harness also runs on a CPU, under the Triton interpreter). The rewritten
  parts are written with ``ast.unparse`` (comments dropped); unchanged parts are copied verbatim.

Not supported yet: JSONL lines without ``file`` (KernelBench-X can match ``instruction`` text
against its metadata file ``kernelbenchx_v1.json``; mkbench does not read it); KernelBench-X's
per-task ``precision_thresholds`` (cosine similarity / relative L1 / RMSE) and its default
fp32 tolerance (rtol = atol = 1e-5 on raw values): mkbench's AllClose is used instead;
KernelBench-X's quantization-task checker; performance comparison against KernelBench-X's golden
timings; helper modules the harness imports (``data_utils.rand_tensor``) are not rewritten, so
harnesses that draw inputs through them need the KernelBench-X checkout in place (``__file__``
points there) and its device (CUDA); the reference part is imported from its copy, so ``sys.path``
tricks relative to ``__file__`` in it do not resolve; predictions are not rewritten for the device
(a prediction that allocates on ``"cuda"`` fails on a CPU, as on any mkbench backend).
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import importlib.util
import json
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable

import torch

from ..errors import BadInput
from ..task import CATEGORIES, SHAPE_ROLES
from . import WRAPPER_BANNER, ImportReport, check_identifier, write_file

SEPARATOR = "#" * 146

#: KernelBench-X category folder -> mkbench category
CATEGORY_MAP = {
    "Fusion": "fusion", "Math": "math", "LinearAlgebra": "linear_algebra", "Activation": "activation",
    "MatrixMultiply": "matmul", "Index": "index", "Loss": "loss", "Quantization": "quantization",
    "Reduce": "reduce", "Normalization": "normalization", "Optimizer": "optimizer", "SpatialOps": "spatial",
    "Convolution": "convolution", "Pooling": "pooling", "Random": "random",
}
_CATEGORY_LOOKUP = {k.lower(): v for k, v in CATEGORY_MAP.items()} | {c: c for c in CATEGORIES}

DEVICE_NAME = "__kbx_device__"
SYNC_NAME = "__kbx_sync__"


def map_category(name: str | None) -> str | None:
    """mkbench category for a KernelBench-X category folder name (or an mkbench category name)."""
    if not name:
        return None
    return _CATEGORY_LOOKUP.get(name.lower())


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


def defines_entry(code: str, stem: str) -> str | None:
    """KernelBench-X's kernel entry check: why ``code`` has no top-level ``<stem>`` or
    ``kernel_function``, or None."""
    if not code.strip():
        return "empty prediction"
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    names = {stem, "kernel_function"}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names:
            return None
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
            return None
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in names:
            return None
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) in names for a in node.names):
            return None
    return f"defines neither `{stem}` nor `kernel_function` at top level"


# ---------------------------------------------------------------------------------------------
# Runtime: the test harness (in the worker)
# ---------------------------------------------------------------------------------------------


def harness_inputs(gen: torch.Generator, harness: "Harness") -> tuple:
    """The inputs of a harness task: an int64 seed on the generator's device, and a function
    ``run_harness(seed, impl)`` that runs the task's harness with ``impl`` (a new function per
    input set, so a candidate has no handle on the harness object the reference uses)."""
    from ..taskkit import seed_from

    def run_harness(seed, impl):
        return harness.run(impl, seed)
    return (torch.tensor([seed_from(gen)], dtype=torch.int64, device=gen.device), run_harness)


def _cuda_devices(device: torch.device) -> list[int]:
    if device.type != "cuda":
        return []
    return [device.index if device.index is not None else torch.cuda.current_device()]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def flatten_results(value: Any, device: torch.device | str) -> tuple:
    """Every value a harness collected, as a flat tuple of plain tensors (see module docstring)."""
    device = torch.device(device)
    out: list[torch.Tensor] = []

    def walk(v: Any) -> None:
        if isinstance(v, torch.Tensor):
            out.append(v.detach())
        elif isinstance(v, dict):
            for k in sorted(v, key=lambda k: (type(k).__name__, str(k))):
                walk(v[k])
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, bool):
            out.append(torch.tensor(v, dtype=torch.bool, device=device))
        elif isinstance(v, int):
            out.append(torch.tensor(v, dtype=torch.int64, device=device))
        elif isinstance(v, float):
            out.append(torch.tensor(v, dtype=torch.float32, device=device))
        elif isinstance(v, complex):
            out.append(torch.tensor(v, dtype=torch.complex64, device=device))
        elif v is None:
            out.append(torch.zeros(0, dtype=torch.bool, device=device))
        elif isinstance(v, str):
            out.append(torch.tensor(list(v.encode()), dtype=torch.uint8, device=device))
        elif isinstance(v, torch.dtype):
            walk(str(v))
        else:
            try:
                import numpy as np
            except ImportError:  # pragma: no cover
                np = None
            if np is not None and isinstance(v, (np.ndarray, np.generic)):
                out.append(torch.as_tensor(np.asarray(v)).to(device))
            else:
                raise TypeError(f"the test harness returned a {type(v).__name__}, which cannot be compared")
    walk(value)
    return tuple(out)


class Harness:
    """A KernelBench-X ``test_<task>()`` harness, run with a given implementation of ``<task>``."""

    def __init__(self, stem: str, test_fn: str, *, test_source: str | None = None,
                 test_path: str | Path | None = None, origin: str | None = None):
        if test_source is None and test_path is None:
            raise ValueError("Harness needs test_source or test_path")
        self.stem, self.test_fn, self.origin = stem, test_fn, origin
        self._source, self._path, self._code = test_source, Path(test_path) if test_path else None, None

    @property
    def test_source(self) -> str:
        if self._source is None:
            self._source = self._path.read_text()
        return self._source

    def _compiled(self):
        if self._code is None:
            filename = str(self._path) if self._path else f"<KernelBench-X {self.test_fn}>"
            self._code = compile(self.test_source, filename, "exec")
        return self._code

    def run(self, impl: Callable[..., Any], seed: torch.Tensor) -> tuple:
        if not isinstance(seed, torch.Tensor):
            raise TypeError(f"a KernelBench-X harness task takes a seed tensor, not {type(seed).__name__}")
        device = seed.device
        if isinstance(impl, ReferenceFunction):
            impl = impl.for_device(device)
        ns: dict[str, Any] = {
            "__name__": f"kbx_harness_{self.stem}", "__builtins__": builtins,
            "__file__": self.origin or str(self._path or "<KernelBench-X harness>"),
            DEVICE_NAME: str(device), SYNC_NAME: lambda *a, **k: _sync(device),
        }
        value = int(seed.reshape(-1)[0].item())
        saved_path, py_state = list(sys.path), random.getstate()
        try:
            import numpy as np
            np_state = np.random.get_state()
        except ImportError:  # pragma: no cover
            np, np_state = None, None
        try:
            with torch.random.fork_rng(devices=_cuda_devices(device)), torch.enable_grad():
                torch.manual_seed(value)
                random.seed(value)
                if np is not None:
                    np.random.seed(value % 2**32)
                exec(self._compiled(), ns)
                ns[self.stem] = impl  # the implementation under test
                test = ns.get(self.test_fn)
                if not callable(test):
                    raise RuntimeError(f"the harness defines no {self.test_fn}()")
                results = test()
        finally:
            sys.path[:] = saved_path
            random.setstate(py_state)
            if np is not None:
                np.random.set_state(np_state)
        return flatten_results(results, device)


class ReferenceFunction:
    """The reference part of a KernelBench-X file, imported lazily once per device (its device
    literals may have been rewritten to the global ``__kbx_device__``)."""

    def __init__(self, path: str | Path, stem: str):
        self.path, self.stem = Path(path), stem
        self._fns: dict[str, Callable] = {}

    def for_device(self, device: torch.device) -> Callable:
        key = str(device)
        if key not in self._fns:
            resolved = self.path.resolve()
            digest = hashlib.sha1(f"{resolved}|{key}".encode()).hexdigest()[:10]
            name = f"mkbench_kbx_ref_{self.stem}_{digest}"
            module = sys.modules.get(name)
            if module is None:
                spec = importlib.util.spec_from_file_location(name, resolved)
                module = importlib.util.module_from_spec(spec)
                setattr(module, DEVICE_NAME, key)
                setattr(module, SYNC_NAME, lambda *a, **k: _sync(device))
                sys.modules[name] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[name]
                    raise
            fn = getattr(module, self.stem, None)
            if not callable(fn):
                raise ImportError(f"{self.path}: defines no function {self.stem}")
            self._fns[key] = fn
        return self._fns[key]

    def __call__(self, *args, **kwargs):  # on the default device: for direct use only
        return self.for_device(torch.device("cpu"))(*args, **kwargs)


# ---------------------------------------------------------------------------------------------
# Source transformations (import time)
# ---------------------------------------------------------------------------------------------


class _DeviceRewriter(ast.NodeTransformer):
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
        elif _dotted(f) == "torch.cuda.synchronize":
            node.func = ast.copy_location(ast.Name(SYNC_NAME, ast.Load()), f)
            node.args, node.keywords = [], []
            self.changed = True
        return node


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


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
    module-level statements that run the tests removed."""
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


def find_test_function(source: str, stem: str) -> str | None:
    tree = ast.parse(source)
    tests = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    if f"test_{stem}" in tests:
        return f"test_{stem}"
    return tests[0] if len(tests) == 1 else None


# ---------------------------------------------------------------------------------------------
# Predictions -> candidates
# ---------------------------------------------------------------------------------------------


@dataclass
class Prediction:
    label: str  # where it came from, for messages
    stem: str
    kbx_category: str | None
    code: str


def collect_predictions(path: Path) -> tuple[list[Prediction], list[str]]:
    """Predictions found at ``path`` and one line per thing that could not be read."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in (".py", ".jsonl"))
        if not files:
            raise BadInput(f"{path}: no *.py or *.jsonl files")
    elif path.is_file():
        files = [path]
    else:
        raise BadInput(f"{path}: no such file or directory")
    preds, problems = [], []
    for f in files:
        if f.suffix == ".jsonl":
            try:
                lines = f.read_text().splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(f"{f}: cannot read: {exc}")
                continue
            for i, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                label = f"{f}:{i}"
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    problems.append(f"{label}: not JSON: {exc.msg}")
                    continue
                if not isinstance(obj, dict) or "predict" not in obj:
                    problems.append(f"{label}: no \"predict\" field")
                    continue
                if not isinstance(obj.get("file"), str) or not obj["file"].strip():
                    problems.append(f"{label}: no \"file\" field (matching by \"instruction\" needs KernelBench-X's "
                                    "metadata and is not supported)")
                    continue
                kbx_file = PurePosixPath(obj["file"].strip().replace("\\", "/"))
                code = above_separator(strip_fences(obj["predict"] or ""))
                preds.append(Prediction(f"{label} ({kbx_file})", kbx_file.stem,
                                        kbx_file.parent.name or None, code))
        elif f.suffix == ".py":
            try:
                text = f.read_text()
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(f"{f}: cannot read: {exc}")
                continue
            parent = f.parent.name if map_category(f.parent.name) else None
            preds.append(Prediction(str(f), f.stem, parent, above_separator(text)))
        else:
            problems.append(f"{f}: not a .py or .jsonl file")
    return preds, problems


HARNESS_FOOTER = '''

{banner}
# KernelBench-X prediction for `{stem}`, for mkbench task {task}, whose inputs are a seed and a
# function running the task's test harness {test_fn}(): kernel_function hands the harness this
# file's `{impl}` as the implementation under test.
_mkbench_kbx_impl = {impl}


def kernel_function(seed, run_harness):
    return run_harness(seed, _mkbench_kbx_impl)
'''


def _entry_name(code: str, stem: str) -> str | None:
    """The implementation a harness candidate hands over: ``<stem>`` if the prediction defines it
    at top level, else ``kernel_function``, else None."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).split(".")[0] for a in node.names)
    for name in (stem, "kernel_function"):
        if name in found:
            return name
    return None


def import_predictions(path: Path, out: Path, *, prefix: str = "", registry=None) -> ImportReport:
    """Write one candidate per prediction whose task exists; report the rest."""
    if registry is None:
        from ..plugins import build_registry
        registry = build_registry()
    report = ImportReport()
    preds, problems = collect_predictions(Path(path))
    for line in problems:
        report.skip(line)
    seen: dict[str, str] = {}
    for pred in preds:
        name = f"{prefix}{pred.stem}"
        task = registry.tasks.get(name) if name.isidentifier() else None
        if task is None:
            report.skip(f"{pred.label}: no task {name!r} in mkbench's registry")
            continue
        if name in seen:
            report.skip(f"{pred.label}: task {name} already has a prediction ({seen[name]})")
            continue
        seen[name] = pred.label
        mapped = map_category(pred.kbx_category)
        if pred.kbx_category and mapped is None:
            report.note(f"{pred.label}: unknown KernelBench-X category {pred.kbx_category!r}; written under {task.category}")
        elif mapped and mapped != task.category:
            report.note(f"{pred.label}: KernelBench-X category {pred.kbx_category} is mkbench's {mapped}, "
                        f"but task {name} is in {task.category}; written under {task.category}")
        harness = getattr(task.reference, "kbx_harness", None)
        text = pred.code
        if isinstance(harness, Harness):
            impl = _entry_name(pred.code, harness.stem)
            if impl is not None:  # else left as is: the run reports the missing entry point
                text = text.rstrip("\n") + "\n" + HARNESS_FOOTER.format(
                    banner=WRAPPER_BANNER, stem=harness.stem, test_fn=harness.test_fn, task=name, impl=impl)
        dest = Path(out) / task.category / f"{name}.py"
        write_file(dest, text)
        problem = defines_entry(pred.code, harness.stem if isinstance(harness, Harness) else name)
        kind = "harness candidate" if isinstance(harness, Harness) else "candidate"
        report.wrote(f"{kind} {name} ({task.category}) <- {pred.label}: {dest}"
                     + (f" [{problem}: it will be a compile error]" if problem else ""))
    return report


# ---------------------------------------------------------------------------------------------
# Task files -> harness tasks
# ---------------------------------------------------------------------------------------------

TASK_TEMPLATE = '''"""KernelBench-X task {stem!r}, imported by `mkbench import kernelbench-x --as-tasks`
(mkbench.importers.kernelbench_x) from {origin}.

Reference: the part of that file above its 146-'#' line, {ref_name}.
Harness: the part below it without its module-level call{rewritten}, {harness_name}.
Inputs: a seed tensor and a function run_harness(seed, impl). reference(seed, run_harness) runs
{test_fn}() with the reference `{stem}` under torch.manual_seed(seed) and returns every collected
output, flattened in sorted-key order. Candidates written by `mkbench import kernelbench-x
--prefix {prefix}` call run_harness(seed, <their own {stem}>). Timings cover the whole harness
(input creation included), not one kernel call.
"""

from pathlib import Path

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.importers import kernelbench_x as _kbx

_HARNESS = _kbx.Harness({stem!r}, {test_fn!r}, test_path=Path(__file__).with_name({harness_name!r}),
                        origin={origin!r})
_REFERENCE = _kbx.ReferenceFunction(Path(__file__).with_name({ref_name!r}), {stem!r})


def reference(seed, run_harness):
    return _HARNESS.run(_REFERENCE, seed)  # its own harness, not the one handed to candidates


reference.kbx_harness = _HARNESS  # lets `mkbench import kernelbench-x` wrap predictions for this task


def make_inputs(shape, dtype, gen):
    return _kbx.harness_inputs(gen, _HARNESS)  # (seed tensor, run_harness(seed, impl))


def flops(shape):
    return 0.0  # KernelBench-X harnesses carry no FLOP counts


def nbytes_moved(shape, dtype):
    return 0.0  # nor byte counts


TASK = Task(
    name={task!r},
    category={category!r},
    description={description!r},
    reference=reference,
    make_inputs=make_inputs,
    shapes=[Shape("harness", {{}}, {role!r})],
    dtypes=("float32",),
    contract=AllClose(reference_precision=None),
    flops=flops,
    bytes=nbytes_moved,
)
'''


def _registered_elsewhere(out: Path) -> dict[str, str]:
    from ..plugins import build_registry
    out = out.resolve()
    taken = {}
    for name, task in build_registry().tasks.items():
        src = Path(task.source).resolve() if task.source else None
        if src is None or out not in src.parents:
            taken[name] = str(src) if src else "(in-process)"
    return taken


def import_task_files(path: Path, out: Path, *, category: str | None = None, prefix: str = "kbx_",
                      shape_role: str = "standard") -> ImportReport:
    if category is not None and category not in CATEGORIES:
        raise BadInput(f"--category {category!r}: unknown (known: {', '.join(CATEGORIES)})")
    if shape_role not in SHAPE_ROLES:
        raise BadInput(f"--shape-role {shape_role!r}: must be one of {', '.join(SHAPE_ROLES)}")
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.py") if p.name != "__init__.py")
    elif path.is_file():
        files = [path]
    else:
        raise BadInput(f"{path}: no such file or directory")
    if not files:
        raise BadInput(f"{path}: no *.py files")
    report = ImportReport()
    plans = []
    for f in files:
        name = f"{prefix}{f.stem}"
        bad = check_identifier(name, str(f))
        if bad:
            report.skip(bad)
            continue
        cat = category or map_category(f.parent.name)
        if cat is None:
            raise BadInput(f"{f}: cannot infer a category from folder {f.parent.name!r}; pass --category "
                           f"(KernelBench-X folders: {', '.join(CATEGORY_MAP)})")
        plans.append((f, name, cat))
    names = [n for _, n, _ in plans]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise BadInput(f"several files would become task(s) {', '.join(dupes)}")
    taken = _registered_elsewhere(Path(out))
    clash = [f"{n} ({taken[n]})" for n in names if n in taken]
    if clash:
        raise BadInput(f"task names already registered elsewhere: {', '.join(clash)}; use another --prefix")

    from ..task import load_task_file
    for f, name, cat in plans:
        try:
            text = f.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            report.skip(f"{f}: cannot read: {exc}")
            continue
        if SEPARATOR not in text:
            report.skip(f"{f}: no line of 146 '#' separating the reference from the test harness")
            continue
        ref_part, test_part = text.split(SEPARATOR, 1)[0], text.split(SEPARATOR)[-1]
        why = _reference_problem(ref_part, f.stem)
        if why:
            report.skip(f"{f}: reference part: {why}")
            continue
        try:
            test_fn = find_test_function(test_part, f.stem)
        except SyntaxError as exc:
            report.skip(f"{f}: test harness: syntax error at line {exc.lineno}: {exc.msg}")
            continue
        if test_fn is None:
            report.skip(f"{f}: test harness defines no test_{f.stem}() (nor exactly one test_* function)")
            continue
        ref_src, ref_changed = rewrite_source(ref_part, strip_invocations=False)
        test_src, test_changed = rewrite_source(test_part, strip_invocations=True)
        folder = Path(out) / cat
        ref_name, harness_name = f"_{name}_ref.py", f"_{name}_harness.py"
        write_file(folder / ref_name, ref_src)
        write_file(folder / harness_name, test_src)
        rewritten = "; device literals rewritten" if (ref_changed or test_changed) else ""
        kbx_cat = f.parent.name if map_category(f.parent.name) else None
        description = f"KernelBench-X {(kbx_cat + '/') if kbx_cat else ''}{f.name} through its test harness {test_fn}()"
        task_file = folder / f"{name}.py"
        write_file(task_file, TASK_TEMPLATE.format(
            stem=f.stem, origin=str(f.resolve()), ref_name=ref_name, harness_name=harness_name, rewritten=rewritten,
            test_fn=test_fn, prefix=prefix, task=name, category=cat, description=description, role=shape_role))
        try:
            load_task_file(task_file)
        except BadInput as exc:  # pragma: no cover - a generator bug, not a user error
            report.skip(f"{f}: generated task does not load: {exc}")
            continue
        report.wrote(f"task {name} ({cat}) <- {f}: {task_file}")
    return report


def _reference_problem(code: str, stem: str) -> str | None:
    """Why the reference part does not define the task function ``<stem>`` at top level, or None."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == stem:
            return None
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == stem for t in node.targets):
            return None
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) == stem for a in node.names):
            return None
    return f"defines no function {stem} at top level"


__all__ = ["CATEGORY_MAP", "Harness", "ReferenceFunction", "SEPARATOR", "collect_predictions", "flatten_results",
           "harness_inputs", "import_predictions", "import_task_files", "map_category", "rewrite_source",
           "strip_fences"]
