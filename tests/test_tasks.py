"""The task suite validates itself (mkbench.validate): every built-in task's reference runs,
is deterministic, depends on every input, passes its own contract, and its contract rejects the
negative controls. A planted bad task proves the validator can fail."""

import os
import textwrap

import pytest
import torch

from mkbench.plugins import build_registry
from mkbench.task import CATEGORIES, load_task_file
from mkbench.validate import validate_task

REG = build_registry()
TASKS = sorted(REG.tasks.values(), key=lambda t: t.qualified_name)
CPU = REG.hardware["cpu"]


def test_every_category_has_a_task():
    assert {t.category for t in TASKS} == set(CATEGORIES)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.qualified_name)
def test_task_shapes(task):
    roles = [s.role for s in task.shapes]
    assert {"small", "awkward", "large"} <= set(roles), roles
    assert task.description and task.contract.description
    biggest_l2 = max(h.l2_cache_mb for h in REG.hardware.values()) * 2**20
    assert all(task.bytes(s, torch.float32) >= 2 * biggest_l2 for s in task.shapes if s.role == "large")


@pytest.mark.skipif(os.environ.get("MKBENCH_TASKS_VALIDATED") == "1",
                    reason="every task was validated by `mkbench validate` earlier in this same .ci/test run, which "
                           "gates it")
@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.qualified_name)
def test_task_validates(task):
    v = validate_task(task, CPU)
    assert v.ok, v.problems
    assert v.controls_run >= 4 * v.combos and v.controls_rejected == v.controls_run


BAD_TASK = '''
import torch
from mkbench import Shape, Task
from mkbench.contracts import AllClose, Tol
from mkbench.taskkit import randn

def reference(x, y):
    return torch.relu(x)  # ignores y

def make_inputs(shape, dtype, gen):
    n = shape["n"]
    return (randn(gen, (n,), dtype, scale=1e-3), randn(gen, (n,), dtype))

TASK = Task(name="bad_relu", category="activation", description="a task with two planted bugs",
            reference=reference, make_inputs=make_inputs,
            shapes=[Shape("small", {"n": 1000}, "small"), Shape("awkward", {"n": 33}, "awkward"),
                    Shape("large", {"n": 2**27}, "large")],
            contract=AllClose(tolerances={"float32": Tol(1e-4, 1.0)}, scale="abs"),  # atol 1.0 absolute: zeros pass
            flops=lambda s: s["n"], bytes=lambda s, d: 8 * s["n"])
'''


def test_validator_catches_planted_bugs(tmp_path):
    folder = tmp_path / "activation"
    folder.mkdir()
    (folder / "bad_relu.py").write_text(textwrap.dedent(BAD_TASK))
    v = validate_task(load_task_file(folder / "bad_relu.py"), CPU)
    assert not v.ok
    text = "\n".join(v.problems)
    assert "does not depend on input[1]" in text
    assert "negative control 'zeros' was accepted" in text


def test_even_positions_stay_in_bounds_at_large_sizes():
    # The large random-fill shapes hold 2**27 values; a float32 linspace put the last index at n.
    from mkbench.taskkit import even_positions
    for n, k in ((2 ** 27, 2 ** 20), (2 ** 27 + 3, 2 ** 17), (10007, 4096), (5, 5)):
        idx = even_positions(n, k)
        assert idx[0] == 0 and idx[-1] == n - 1 and len(idx) == k
        assert bool((idx[1:] > idx[:-1]).all())
    assert torch.linspace(0, 2 ** 27 - 1, 2 ** 20).round().long()[-1] == 2 ** 27  # the bug this replaces
