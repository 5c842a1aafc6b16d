"""Every built-in task loads, runs its reference, accepts the reference at its own dtype, and
rejects trivial wrong answers (zeros, one perturbed element). The full negative-control suite is
`mkbench validate`'s job; this keeps every task honest in CI meanwhile."""

import pytest
import torch

from mkbench.backend import Backend
from mkbench.plugins import build_registry
from mkbench.worker import Evaluation

REG = build_registry()
TASKS = sorted(REG.tasks.values(), key=lambda t: t.qualified_name)
CPU = REG.hardware["cpu"]


class _Fn(Backend):
    name = "fn"


def _evaluate(task, shape, dtype, fn):
    job = {"task": task, "backend": _Fn(), "hw": CPU, "seeds": 1, "run_seed": 1234}
    status, message, _ = Evaluation(job, lambda msg: None).check_combo(fn, shape, dtype)
    return status, message


def _perturb(t: torch.Tensor) -> torch.Tensor:
    t = t.clone()
    flat = t.view(-1)
    i = int(torch.argmax(flat.abs().to(torch.float64)))
    if t.is_floating_point():
        flat[i] = flat[i] * 1.5 + 1.0
    elif t.dtype == torch.bool:
        flat[i] = ~flat[i]
    else:
        flat[i] = flat[i] - 3 if int(flat[i]) > 0 else flat[i] + 3
    return t


def _outputs(task, *args):
    out = task.reference(*args)
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def test_every_category_has_a_task():
    from mkbench.task import CATEGORIES
    assert {t.category for t in TASKS} == set(CATEGORIES)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.qualified_name)
def test_task_shape_roles(task):
    roles = [s.role for s in task.shapes]
    assert {"small", "awkward", "large"} <= set(roles), roles
    assert task.description and task.contract.description


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.qualified_name)
def test_large_shape_exceeds_l2(task):
    biggest_l2 = max(h.l2_cache_mb for h in REG.hardware.values()) * 2**20
    large = [s for s in task.shapes if s.role == "large"]
    assert all(task.bytes(s, torch.float32) >= 2 * biggest_l2 for s in large)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.qualified_name)
def test_reference_passes_and_trivial_answers_fail(task):
    for shape in (s for s in task.shapes if s.role != "large"):
        for dtype in task.dtypes:
            status, msg = _evaluate(task, shape, dtype, task.reference)
            assert status == "correct", f"{shape.name}/{dtype}: reference rejected: {msg}"
            status, msg = _evaluate(task, shape, dtype, lambda *a: tuple(torch.zeros_like(o) for o in _outputs(task, *a)))
            assert status == "incorrect", f"{shape.name}/{dtype}: zeros accepted"
            status, msg = _evaluate(task, shape, dtype, lambda *a: tuple(_perturb(o) for o in _outputs(task, *a)))
            assert status == "incorrect", f"{shape.name}/{dtype}: a perturbed element was accepted"
