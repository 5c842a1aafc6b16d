"""The task suite validates itself: every task's reference runs for every shape and dtype, is
deterministic, depends on every input, passes its own contract, and its contract rejects the
negative controls that public suites were caught accepting (MEASUREMENT.md).

Positive controls: the framework's own result (eager: the reference at the task's dtype, or in
``Task.baseline_compute_dtype`` where the task sets one, or ``Task.baseline`` where it sets one: the
baseline every speedup is measured against; with ``compile``, torch.compile's too) must pass the
task's contract on every seed checked. On the CPU that is the small and awkward shapes; on a GPU
(``mkbench validate --device cuda``) every shape, where eager was seen failing contracts it passed
on the CPU (bfloat16 rounding on large shapes).

Inputs must be the same in every process: the judge regenerates them in its own. Each combination's
inputs are reduced to a digest (:func:`input_digest`) that the caller recomputes in another process
and compares (``mkbench validate`` does, for every combination).

A task whose reference keeps state across calls (``Task.stateful_reference``, an imported model that
updates its attributes in ``forward``) is validated as a run judges it: every check starts from the
model's initial state, in copies of its own for the judge and for the control (:func:`fresh`); that
its answers do change on a repeated call is said in the task's notes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable

import torch

from .contracts import CheckContext, upcast
from .hardware import HardwareProfile
from .inputs import generate, same, seed_for
from .inputs import normalize as _normalize
from .judge import check_callable
from .task import Shape, Task, baseline_reference, load_task_file


def fresh(task: Task) -> Task:
    """``task`` itself, or for a stateful reference a copy from the initial state."""
    return load_task_file(task.source, fresh=True) if task.stateful_reference and task.source else task


@dataclass
class TaskValidation:
    task: str
    combos: int = 0
    controls_rejected: int = 0
    controls_run: int = 0
    positives_passed: int = 0
    positives_run: int = 0
    problems: list[str] = field(default_factory=list)
    #: what passed, but not as a deterministic task would (a nondeterministic reference within its contract)
    notes: list[str] = field(default_factory=list)
    #: combinations whose validation ran out of GPU memory (``mkbench validate`` retries the task alone)
    out_of_memory: list[str] = field(default_factory=list)
    #: (shape, dtype) -> digest of the inputs this process generated (compared in another process)
    input_digests: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def counts(self) -> dict[str, int]:
        """The control counts a summary adds up (``mkbench validate --summary``)."""
        return {"positive_controls": self.positives_run,
                "positive_rejected": self.positives_run - self.positives_passed,
                "negative_controls": self.controls_run,
                "negative_accepted": self.controls_run - self.controls_rejected}


def summary(done: list[tuple[str, str, TaskValidation, float]], device: str, complete: bool, **settings) -> dict:
    """What ``mkbench validate --summary`` writes (a GPU report commits it as its summary.json):
    totals, per category, and per task, over ``done`` ((task, category, outcome, seconds) of the
    tasks finished so far); ``complete`` is False until the run has checked every task."""
    totals = dict.fromkeys(("positive_controls", "positive_rejected", "negative_controls", "negative_accepted"), 0)
    per_category: dict[str, dict[str, int]] = {}
    detail = []
    for name, category, v, seconds in done:
        cat = per_category.setdefault(category, {"tasks": 0, "tasks_ok": 0, **dict.fromkeys(totals, 0)})
        cat["tasks"] += 1
        cat["tasks_ok"] += int(v.ok)
        for key, n in v.counts().items():
            totals[key] += n
            cat[key] += n
        detail.append({"task": name, "category": category, "ok": v.ok, "combos": v.combos,
                       "seconds": round(seconds, 2), "problems": list(v.problems), "notes": list(v.notes),
                       "out_of_memory": list(v.out_of_memory), **v.counts()})
    return {"complete": complete, "device": device, "torch": torch.__version__, **settings,
            "tasks": len(done), "tasks_ok": sum(1 for d in done if d[2].ok), **totals,
            "per_category": dict(sorted(per_category.items())), "tasks_detail": detail}


def _poison(t: torch.Tensor) -> torch.Tensor:
    """What an unwritten output holds in a poisoned allocation."""
    if t.is_floating_point():
        return torch.full_like(t, float("nan"))
    if t.dtype == torch.bool:
        return torch.ones_like(t)
    return torch.full_like(t, 0x5A)


def _constant_mean(t: torch.Tensor) -> torch.Tensor:
    if t.is_floating_point():
        return torch.full_like(t, float(t.double().mean()) if t.numel() else 0.0)
    return torch.full_like(t, int(t.double().mean().round()) if t.numel() else 0)


def _perturb_few(t: torch.Tensor) -> torch.Tensor:
    """The largest-magnitude element and two others changed: a kernel wrong on a few elements.

    Floating outputs: the three are finite elements (the largest finite magnitude, the middle and
    the last finite ones), each moved away from zero to 1.5 |v| + 1, a change of at least 1 and of
    half the value. Why: the picks used to be the largest |v| (argmax puts a NaN or an inf there)
    and fixed positions, changed to 1.5 v + 1, a no-op on NaN and inf and none at all at v = -2:
    on an H100, xlogy's float16 outputs (NaN and inf by design) had the control changing nothing
    beyond tolerance and 'perturbed' was accepted: the control was weak, not the contract."""
    t = t.clone()
    flat = t.view(-1)
    if flat.numel() == 0:
        return t
    idx = {int(torch.argmax(flat.abs().double())), flat.numel() // 2, flat.numel() - 1}
    if t.is_floating_point():
        finite = torch.nonzero(torch.isfinite(flat)).flatten()
        if finite.numel():
            mags = flat[finite].abs().double()
            idx = {int(finite[int(torch.argmax(mags))]), int(finite[finite.numel() // 2]), int(finite[-1])}
    for i in idx:
        if t.is_floating_point():
            v = flat[i].double()
            # in float64, then rounded: near the dtype's max (nan_to_num's output) it becomes inf
            flat[i] = ((1.5 * v.abs() + 1.0) * (-1.0 if float(v) < 0 else 1.0)).to(t.dtype)
        elif t.dtype == torch.bool:
            flat[i] = ~flat[i]
        else:
            flat[i] = flat[i] - 3 if int(flat[i]) > 0 else flat[i] + 3
    return t


def controls(task: Task) -> dict[str, Callable[..., tuple]]:
    """Negative controls as candidate functions over the task's inputs."""

    def ref(*a):
        return _normalize(task.reference(*a))

    def returns_input(*a):
        out = ref(*a)
        tensors = [v for v in a if isinstance(v, torch.Tensor)]
        picked = []
        for o in out:
            same = next((v for v in tensors if v.shape == o.shape and v.dtype == o.dtype), None)
            if same is None:
                return None  # shapes do not allow it
            picked.append(same.clone())
        return tuple(picked)

    def in_bf16(*a):
        # bf16 precision without needing bf16 kernels for every op: inputs and outputs rounded
        # through bfloat16, arithmetic in float32.
        def through_bf16(v):
            return v.to(torch.bfloat16).to(v.dtype) if isinstance(v, torch.Tensor) and v.dtype == torch.float32 else v
        return tuple(through_bf16(o) for o in ref(*(through_bf16(v) for v in a)))

    return {
        "zeros": lambda *a: tuple(torch.zeros_like(o) for o in ref(*a)),
        "uninitialised": lambda *a: tuple(_poison(o) for o in ref(*a)),
        "returns_input": returns_input,
        "constant_mean": lambda *a: tuple(_constant_mean(o) for o in ref(*a)),
        "perturbed": lambda *a: tuple(_perturb_few(o) for o in ref(*a)),
        "bf16_compute": in_bf16,
    }


def _outputs_equal(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(
        x.shape == y.shape and x.dtype == y.dtype and torch.equal(torch.nan_to_num(x), torch.nan_to_num(y)) for x,
        y in zip(a, b))


VALIDATION_SEED = 20261122


def input_digest(task: Task, shape: Shape, dtype: str, seed: int, device: str) -> str:
    """SHA-256 of a combination's generated inputs (bytes, dtypes, shapes; non-tensor values by repr)."""
    h = hashlib.sha256()
    for value in generate(task, shape, dtype, seed, device):
        if isinstance(value, torch.Tensor):
            t = value.detach().contiguous().cpu()
            h.update(f"{t.dtype}{tuple(t.shape)}".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        else:
            h.update(repr(value).encode())
    return h.hexdigest()


def validate_task(task: Task, hw: HardwareProfile, shape_roles=("small", "awkward"),
                  seed: int = VALIDATION_SEED, seeds: int = 1, compile_control: bool = False) -> TaskValidation:
    v = TaskValidation(task.name)
    for shape in task.shapes:
        if shape.role not in shape_roles:
            continue
        for dtype in task.dtypes:
            v.combos += 1
            where = f"{shape.name}/{dtype}"
            try:
                _validate_combo(task, shape, dtype, hw.device, seed, v, where)
                _positive_controls(task, shape, dtype, hw.device, seed, seeds, compile_control, v, where)
            except Exception as exc:
                v.problems.append(f"{where}: validation raised {type(exc).__name__}: {exc}")
                if isinstance(exc, torch.cuda.OutOfMemoryError):
                    # tasks validated in parallel share the GPU: the caller retries this task alone
                    v.out_of_memory.append(where)
                    del exc
                    if torch.cuda.is_available():
                        torch.cuda.empty_cache()
    if v.controls_run < 4 * v.combos:
        v.problems.append(f"only {v.controls_run} negative controls apply over {v.combos} shape x dtype combinations "
                          "(at least 4 each are needed for the contract to be tested)")
    return v


def _positive_controls(task: Task, shape: Shape, dtype: str, device: str, seed: int, seeds: int,
                       compile_control: bool, v: TaskValidation, where: str) -> None:
    """The framework's results must pass the contract: eager (the reference at the task's dtype, or
    the task's baseline) and, asked for, torch.compile's build of it."""
    # the baselines as they run: with Task.baseline_compute_dtype, in that dtype and cast back; with
    # Task.baseline, that function
    positives = {"eager": lambda: baseline_reference(fresh(task))}
    if compile_control:
        positives["torch.compile"] = lambda: torch.compile(baseline_reference(fresh(task)))
    for name, build in positives.items():
        res = check_callable(fresh(task), build(), shape, dtype, seeds, seed, device)
        v.positives_run += 1  # counted once its check has finished: one cut by an error is no verdict
        if res.ok:
            v.positives_passed += 1
        else:
            v.problems.append(f"{where}: positive control '{name}' was rejected: {res.message}")


def _validate_combo(task: Task, shape: Shape, dtype: str, device: str, seed: int, v: TaskValidation,
                    where: str) -> None:
    # The judge regenerates inputs from the seed in its own process and compares the worker's copy
    # after the call bit for bit: input generation must be deterministic, here and in another process.
    v.input_digests[(shape.name, dtype)] = input_digest(task, shape, dtype, seed_for(seed, "validate"), device)
    inputs = generate(task, shape, dtype, seed_for(seed, "validate"), device)
    again = generate(task, shape, dtype, seed_for(seed, "validate"), device)
    if any(isinstance(a, torch.Tensor) and not same(a, b) for a, b in zip(inputs, again)) or len(inputs) != len(again):
        v.problems.append(f"{where}: make_inputs is not deterministic for a fixed seed")
    with torch.no_grad():
        first = _normalize(fresh(task).reference(*inputs))
        second = _normalize(fresh(task).reference(*again))
    if task.stateful_reference:
        v.notes.append(f"{where}: {_stateful_note(task, inputs, first)}")
    if not _outputs_equal(first, second):
        problem = _nondeterminism_problem(task, shape, dtype, device, inputs, first, second)
        if problem is None:
            v.notes.append(f"{where}: {NONDETERMINISTIC_NOTE}")
        else:
            v.problems.append(f"{where}: the reference is not deterministic for a fixed seed, and its contract "
                              f"rejects one run against the other: {problem}")
    # Every tensor input must matter: change it and the output must change.
    for i, value in enumerate(inputs):
        if not isinstance(value, torch.Tensor) or value.numel() == 0:
            continue
        problem = dependence_problem(fresh(task), inputs, i, first)
        if problem:
            v.problems.append(f"{where}: {problem}")
    for name in controls(task):
        if name == "bf16_compute" and dtype != "float32":
            continue
        if name == "returns_input" and returns_input_impossible(task, inputs):
            continue
        fn = controls(fresh(task))[name]
        accepted = check_callable(fresh(task), fn, shape, dtype, 1, seed, device).ok
        v.controls_run += 1  # counted once its check has finished (an out-of-memory error is not 'accepted')
        if accepted:
            v.problems.append(f"{where}: negative control '{name}' was accepted")
        else:
            v.controls_rejected += 1


NONDETERMINISTIC_NOTE = "reference is nondeterministic within its contract (atomics)"


def _stateful_note(task: Task, inputs: tuple, first: tuple) -> str:
    """What a second call of one copy answers to the same inputs, for a stateful task's notes."""
    from .inputs import clone_args
    copy = fresh(task)
    with torch.no_grad():
        copy.reference(*clone_args(inputs))
        repeated = _normalize(copy.reference(*clone_args(inputs)))
    moved = "changes" if not _outputs_equal(first, repeated) else "does not change"
    return (f"the reference keeps state across calls ({task.stateful_reference}): its answer to the same inputs "
            f"{moved} on a second call; each check starts from the initial state")


def _nondeterminism_problem(task: Task, shape: Shape, dtype: str, device: str, inputs: tuple, first: tuple,
                            second: tuple) -> str | None:
    """Two reference runs on the same inputs that are not bit-equal: legitimate where the framework
    sums with atomics (index_add_, scatter_add_, embedding_bag and transposed convolutions on CUDA
    add in whatever order the threads arrive, so float sums differ in the last bits run to run).
    Accepted when the second run passes the task's own contract with the first as the reference,
    the context built as the judge builds it (core/judge.py); otherwise what the contract says."""
    from .judge import alias_problem, structure_problem
    from .task import DTYPES
    problem = structure_problem(second, tuple((tuple(o.shape), o.dtype, o.device.type) for o in first))
    if problem is None:
        problem = alias_problem(second, inputs)
    if problem is not None:
        return problem

    def rerun(*a):
        with torch.no_grad():
            return _normalize(task.reference(*a))

    ctx = CheckContext(dtype=DTYPES[dtype], inputs=inputs, outputs=second, reference=lambda: first,
                       candidate=rerun, make_inputs=lambda s: generate(task, shape, dtype, s, device))
    with torch.no_grad():
        res = task.contract.check(ctx)
    return None if res.ok else (res.message or "rejected")


#: precisions the dependence check asks again in, highest first, when the task's dtype rounds the
#: change away (see :func:`dependence_problem`)
DEPENDENCE_PRECISIONS = (torch.float64, torch.float32)


def dependence_problem(task: Task, inputs: tuple, i: int, first: tuple) -> str | None:
    """Whether the reference's output depends on ``inputs[i]`` (``first``: its outputs on ``inputs``):
    None where changing that input changes the output, else the problem.

    The input is changed everywhere (:func:`_perturb_input`), but at the task's dtype the change can
    still round away: a bfloat16 mean over many terms moves by less than one bfloat16 step when the
    terms are shuffled (nll_loss_ignore_index large/bfloat16 on an H100: 24 per-image means over 2M
    pixels each, the targets reversed: every mean moved by less than one bfloat16 step, 2^-8 of it).
    Changing more of the input would not help there: every target already moved, and any in-range
    change of them has about the same expected loss. So the question is asked
    again in a precision that can represent the change, the way the judge builds its reference:
    floating inputs upcast (:func:`mkbench.contracts.upcast`) to float64, or to float32 where the
    reference cannot run in float64 (imported models whose float32 parameters ``.to`` does not
    reach; ops without a float64 kernel), but only precisions above the task's own. This does not
    weaken the check for real independence: an output that ignores the input is bit-equal in every
    precision, and is a problem when the highest precision the reference runs in says so."""
    changed = list(inputs)
    changed[i] = _perturb_input(inputs[i])
    with torch.no_grad():
        if not _outputs_equal(_normalize(task.reference(*changed)), first):
            return None
        floating = [v.dtype for v in inputs if isinstance(v, torch.Tensor) and v.is_floating_point()]
        raised = []
        for precision in DEPENDENCE_PRECISIONS:
            if not floating or all(d.itemsize >= precision.itemsize for d in floating):
                continue  # nothing to upcast: the task's own dtype is this precision or above
            try:
                out, base = (_normalize(task.reference(*upcast(x, precision))) for x in (changed, inputs))
            except Exception as exc:  # the reference does not run in this precision: try the next
                if isinstance(exc, torch.cuda.OutOfMemoryError):
                    raise  # out of memory is not 'cannot run': the caller retries the task alone
                raised.append(f"in {str(precision).removeprefix('torch.')} the reference raised {type(exc).__name__}")
                continue
            if not _outputs_equal(out, base):
                return None
            return (f"the output does not depend on input[{i}] (not at the task's dtype, nor with the "
                    f"floating inputs in {str(precision).removeprefix('torch.')})")
    return f"the output does not depend on input[{i}]" + (f" ({'; '.join(raised)})" if raised else "")


def _perturb_input(t: torch.Tensor) -> torch.Tensor:
    if t.is_floating_point():
        return (t.double() * 1.25 + 0.5).to(t.dtype)
    if t.dtype == torch.bool:
        return ~t
    # Integer inputs (indices, targets) stay in range: reverse their order.
    return t.flip(-1) if t.dim() else t


def returns_input_impossible(task: Task, inputs: tuple) -> bool:
    out = _normalize(task.reference(*inputs))
    tensors = [v for v in inputs if isinstance(v, torch.Tensor)]
    return any(not any(v.shape == o.shape and v.dtype == o.dtype for v in tensors) for o in out)
