"""The backend-neutral task model.

A task lives in one Python file that defines ``TASK = Task(...)`` with module-level functions, so
that it can be re-imported by path inside an isolated worker (see ``Task.__reduce__``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch

from .errors import BadInput
from .safefile import file_problem  # a FIFO or a directory named *.py would block or break an import

CATEGORIES = (
    "activation", "convolution", "fusion", "index", "linear_algebra", "loss", "math", "matmul",
    "normalization", "optimizer", "pooling", "quantization", "random", "reduce", "spatial",
)

DTYPES: dict[str, torch.dtype] = {
    "float64": torch.float64, "float32": torch.float32, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32, "int8": torch.int8,
    "uint8": torch.uint8, "bool": torch.bool,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}

# Shape roles: "small" for quick checks, "awkward" for non-power-of-two / size-1 edge cases,
# "large" for timing (inputs several times the largest L2 of any profile).
SHAPE_ROLES = ("small", "awkward", "large", "standard")


@dataclass(frozen=True)
class Shape:
    name: str
    params: Mapping[str, Any]
    role: str = "standard"

    def __post_init__(self):
        if self.role not in SHAPE_ROLES:
            raise BadInput(f"shape {self.name!r}: role must be one of {SHAPE_ROLES}, not {self.role!r}")

    def __getitem__(self, key: str) -> Any:
        return self.params[key]


@dataclass
class Task:
    """One benchmark problem.

    ``make_inputs(shape, dtype, generator)`` returns a tuple of tensors and Python scalars; the
    generator lives on the worker's device and tensors must be created there (``device=gen.device``;
    the helpers in :mod:`mkbench.taskkit` do this). ``reference(*inputs)`` is the PyTorch definition.
    ``flops(shape)`` and ``bytes(shape, dtype)`` feed the roofline; ``bytes`` counts each input
    read once and each output written once.
    """

    name: str
    category: str
    description: str
    reference: Callable[..., Any]
    make_inputs: Callable[[Shape, torch.dtype, torch.Generator], tuple]
    shapes: Sequence[Shape]
    contract: Any  # a mkbench.contracts.Contract
    flops: Callable[[Shape], float]
    bytes: Callable[[Shape, torch.dtype], float]
    dtypes: Sequence[str] = ("float32",)
    #: the candidate's call runs the task's own harness too (an imported benchmark's test function,
    #: which builds its inputs and collects results with torch inside the call): the framework work
    #: seen during the call is partly the harness's, so no framework share is measured for it
    harness_in_call: bool = False
    #: why the reference's answer depends on earlier calls (an imported model that updates its own
    #: attributes in forward), or None: the judge's copy then agrees with a candidate only while
    #: both have made the same calls from the initial state (a judge starts a fresh copy for each
    #: unit), so answers after the timed calls are not judged; they are compared with the
    #: candidate's own answers before them (a cache replays them bit for bit)
    stateful_reference: str | None = None
    #: the dtype the PyTorch baselines (eager, torch.compile) compute in where the task's dtype is
    #: narrower, or None (they run the reference at the task's dtype). Set where the framework's
    #: own answer at a half dtype is not acceptable (a bfloat16 cumsum accumulated in bfloat16 over
    #: a long row): floating inputs of the task's dtype are upcast, the reference runs, floating
    #: outputs are cast back (:func:`baseline_reference`); rows say so (:func:`baseline_variant`)
    baseline_compute_dtype: str | None = None
    #: why ``baseline_compute_dtype`` is set (shown with the variant); required with it
    baseline_compute_reason: str | None = None
    #: what the PyTorch baselines (eager, torch.compile) run instead of the reference, or None (they
    #: run the reference). Set where the reference is the judge's ground truth but not what PyTorch
    #: code for the task's stated algorithm does (power_iteration's reference is a float64
    #: eigenpair, which was a torch.linalg.eigh of 41 s a call on an H200 at the large shape): a
    #: function of the task's inputs, at the task's dtype, that must pass the task's contract
    #: (``mkbench validate`` runs it as the positive control) and that torch.compile can build (no
    #: data-dependent Python control flow); rows say so (:func:`baseline_variant`). Not combined
    #: with ``baseline_compute_dtype``.
    baseline: Callable[..., Any] | None = None
    #: what ``baseline`` computes and why it replaces the reference (shown with the variant); required with it
    baseline_reason: str | None = None
    #: the hardware profile's peak rate (``peak_tflops`` key: fp8, int8, ...) the task's FLOPs run at,
    #: where that is not the task's dtype's: an int8 x int8 matmul with a bfloat16 output runs on the
    #: int8 tensor cores. The roofline (the hack rule's floor, efficiency) uses it; None: the dtype's
    math_peak: str | None = None
    #: ``resident_bytes(shape, dtype)``: the bytes the inputs and outputs occupy in memory, where that is
    #: more than ``bytes`` (the traffic the roofline counts: a gather reads a fraction of its table), or
    #: None. The device's memory budget scales the larger of the two (:func:`mkbench.engine.memory.footprint`)
    resident_bytes: Callable[[Shape, torch.dtype], float] | None = None
    #: ``working_bytes(shape, dtype)``: the reference's own intermediates at their peak, beyond its inputs and
    #: outputs (an attention's score and probability matrices), computed at ``dtype``; or None. The judge
    #: holds them at the reference's precision, and a baseline's worker (eager runs the reference) at the
    #: task's; a candidate's kernel need not (:func:`mkbench.engine.memory.footprint`)
    working_bytes: Callable[[Shape, torch.dtype], float] | None = None
    source: str | None = field(default=None, compare=False)  # file the task was loaded from

    def __post_init__(self):
        if not self.name.isidentifier():
            raise BadInput(f"task name {self.name!r} must be a Python identifier")
        if self.category not in CATEGORIES:
            raise BadInput(f"task {self.name}: unknown category {self.category!r} (known: {', '.join(CATEGORIES)})")
        if len(self.shapes) < 1:
            raise BadInput(f"task {self.name}: needs at least one shape")
        for d in self.dtypes:
            if d not in DTYPES:
                raise BadInput(f"task {self.name}: unknown dtype {d!r}")
        if self.baseline_compute_dtype is not None:
            if self.baseline_compute_dtype not in DTYPES or not DTYPES[self.baseline_compute_dtype].is_floating_point:
                raise BadInput(f"task {self.name}: baseline_compute_dtype must be a floating dtype name, not "
                               f"{self.baseline_compute_dtype!r}")
            if not self.baseline_compute_reason:
                raise BadInput(f"task {self.name}: baseline_compute_dtype needs baseline_compute_reason")
        if self.baseline is not None:
            if not callable(self.baseline):
                raise BadInput(f"task {self.name}: baseline must be a function of the task's inputs, not "
                               f"{type(self.baseline).__name__}")
            if not self.baseline_reason:
                raise BadInput(f"task {self.name}: baseline needs baseline_reason")
            if self.baseline_compute_dtype is not None:
                raise BadInput(f"task {self.name}: set baseline or baseline_compute_dtype, not both (a baseline "
                               "computes in whatever dtype it states)")
        elif self.baseline_reason:
            raise BadInput(f"task {self.name}: baseline_reason is set without a baseline")
        if self.math_peak is not None:
            from .hardware import PEAK_KEYS  # hardware does not import task: no cycle
            if self.math_peak not in PEAK_KEYS:
                raise BadInput(f"task {self.name}: math_peak must be one of {', '.join(PEAK_KEYS)}, "
                               f"not {self.math_peak!r}")
        names = [s.name for s in self.shapes]
        if len(set(names)) != len(names):
            raise BadInput(f"task {self.name}: duplicate shape names {names}")

    @property
    def qualified_name(self) -> str:
        return f"{self.category}/{self.name}"

    def shape(self, name: str) -> Shape:
        for s in self.shapes:
            if s.name == name:
                return s
        raise KeyError(name)

    def __reduce__(self):
        # Tasks travel to spawned workers by file path: the worker re-imports the same file.
        if self.source is None:
            raise TypeError(f"task {self.name} has no source file and cannot be sent to a worker")
        return (load_task_file, (self.source,))


def _module_name_for(path: Path) -> str:
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    return f"mkbench_task_{path.stem}_{digest}"


def load_task_file(path: str | Path, fresh: bool = False) -> Task:
    """Import a task file and return its ``TASK``; errors name the file. ``fresh``: import it again,
    an independent copy (a reference that keeps state across calls, as built)."""
    path = Path(path).resolve()
    problem = file_problem(path)
    if problem:
        raise BadInput(f"task file {problem}")
    name = _module_name_for(path)
    if name in sys.modules and hasattr(sys.modules[name], "TASK") and not fresh:
        return sys.modules[name].TASK
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise BadInput(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BadInput as exc:
        del sys.modules[name]
        raise BadInput(f"{path}: {exc}") from None
    except BaseException as exc:  # a malformed task file must not take the suite down, nor exit it (SystemExit)
        del sys.modules[name]
        raise BadInput(f"{path}: task file failed to import: {type(exc).__name__}: {exc}") from None
    task = getattr(module, "TASK", None)
    if not isinstance(task, Task):
        del sys.modules[name]
        raise BadInput(f"{path}: defines no TASK = Task(...)")
    task.source = str(path)
    expected_category = path.parent.name
    if expected_category in CATEGORIES and task.category != expected_category:
        raise BadInput(f"{path}: task category {task.category!r} does not match its folder {expected_category!r}")
    return task


def load_task_dir(root: str | Path) -> list[Task]:
    """Load every ``<category>/<task>.py`` under ``root``."""
    root = Path(root)
    tasks = []
    for path in sorted(root.glob("*/*.py")):
        if path.name.startswith("_"):
            continue
        tasks.append(load_task_file(path))
    return tasks


def _narrower(dtype: torch.dtype, than: torch.dtype) -> bool:
    return dtype.is_floating_point and torch.finfo(dtype).bits < torch.finfo(than).bits


def baseline_variant(task: Task, dtype_name: str, backend: str = "eager") -> str | None:
    """What a PyTorch baseline of ``task`` at ``dtype_name`` computes, where it is not the reference
    at the task's dtype: with ``Task.baseline``, "eager runs <its name>, not the reference: <reason>";
    with ``Task.baseline_compute_dtype``, e.g. "eager computed in float32, cast to bfloat16"; None
    where the baseline is the plain reference."""
    if task.baseline is not None:
        name = getattr(task.baseline, "__name__", "the task's baseline")
        return f"{backend} runs {name}, not the reference: {task.baseline_reason}"
    compute = task.baseline_compute_dtype
    if compute is None or dtype_name not in DTYPES or not _narrower(DTYPES[dtype_name], DTYPES[compute]):
        return None
    return f"{backend} computed in {compute}, cast to {dtype_name}"


def baseline_reference(task: Task) -> Callable[..., Any]:
    """The callable the PyTorch baselines run: ``task.baseline`` where the task sets one;
    ``task.reference``; or, with ``Task.baseline_compute_dtype`` set, the reference over floating
    inputs upcast to that dtype where they are narrower, with its floating outputs cast back to the
    narrowest floating input dtype (the task's dtype). Tensors at the compute dtype or wider are
    left as they are."""
    if task.baseline is not None:
        return task.baseline
    compute_name = task.baseline_compute_dtype
    if compute_name is None:
        return task.reference
    compute = DTYPES[compute_name]
    reference = task.reference

    def upcast_reference(*args):
        narrow = [a.dtype for a in args if isinstance(a, torch.Tensor) and _narrower(a.dtype, compute)]
        if not narrow:
            return reference(*args)
        out_dtype = min(narrow, key=lambda d: torch.finfo(d).bits)
        up = tuple(a.to(compute) if isinstance(a, torch.Tensor) and _narrower(a.dtype, compute) else a for a in args)
        out = reference(*up)

        def back(v):
            return v.to(out_dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
        if isinstance(out, (tuple, list)):
            return type(out)(back(v) for v in out)
        return back(out)

    upcast_reference.__name__ = f"{getattr(reference, '__name__', 'reference')}_in_{compute_name}"
    return upcast_reference
