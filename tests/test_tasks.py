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


PROCESS_INPUTS_TASK = '''
import os
import torch
from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import randn

def reference(x, y):
    return x * y

def make_inputs(shape, dtype, gen):
    n = shape["n"]
    y = torch.full((n,), float(os.getpid()), dtype=dtype)  # the same in one process, not in another
    return (randn(gen, (n,), dtype), y)

TASK = Task(name="pid_inputs", category="activation", description="inputs that depend on the process",
            reference=reference, make_inputs=make_inputs,
            shapes=[Shape("small", {"n": 1000}, "small"), Shape("awkward", {"n": 33}, "awkward"),
                    Shape("large", {"n": 2**27}, "large")],
            contract=AllClose(), flops=lambda s: s["n"], bytes=lambda s, d: 12 * s["n"])
'''

TIGHT_TASK = '''
import torch
from mkbench import Shape, Task
from mkbench.contracts import AllClose, Tol
from mkbench.taskkit import randn

def reference(x):
    return x.cumsum(-1)

def make_inputs(shape, dtype, gen):
    return (randn(gen, (shape["n"],), dtype),)

TASK = Task(name="tight_cumsum", category="math", description="a contract eager cannot meet in float32",
            reference=reference, make_inputs=make_inputs,
            shapes=[Shape("small", {"n": 100000}, "small"), Shape("awkward", {"n": 33333}, "awkward"),
                    Shape("large", {"n": 2**27}, "large")],
            contract=AllClose(tolerances={"float32": Tol(1e-12, 0.0)}, scale="abs"),
            flops=lambda s: s["n"], bytes=lambda s, d: 8 * s["n"])
'''


def test_validate_compares_inputs_across_processes_and_runs_positive_controls(tmp_path, cli):
    """`mkbench validate` regenerates every combination's inputs in another process (a generator
    that reads process state fails), and requires eager to pass the contract (a contract tighter
    than the framework's own rounding fails)."""
    for category, name, text in (("activation", "pid_inputs", PROCESS_INPUTS_TASK),
                                 ("math", "tight_cumsum", TIGHT_TASK)):
        (tmp_path / category).mkdir(exist_ok=True)
        (tmp_path / category / f"{name}.py").write_text(textwrap.dedent(text))
    code, out, err = cli("validate", "--tasks-dir", tmp_path, "--task", "pid_inputs", "--task", "tight_cumsum",
                         "--jobs", "1")
    assert code == 1, (out, err)
    assert "problem: pid_inputs: small/float32: make_inputs gave different inputs in another process" in out
    assert "problem: tight_cumsum: small/float32: positive control 'eager' was rejected" in out
    code, out, err = cli("validate", "--task", "gelu", "--jobs", "1")
    assert code == 0, (out, err)
    assert "6/6 positive controls passed" in out


ROUNDED_DEPENDENCE_TASK = '''
import torch
from mkbench import Shape, Task
from mkbench.contracts import AllClose, Tol
from mkbench.taskkit import randn

def reference(x, t):
    # t's part is far below bfloat16's resolution of the result: reversing t changes nothing at the
    # task's dtype, but the function does depend on t
    weights = torch.arange(t.numel(), dtype=torch.float64, device=t.device)
    return ((x.double().sum() + 1e-9 * (t.double() * weights).sum()).reshape(1)).to(x.dtype)

def make_inputs(shape, dtype, gen):
    n = shape["n"]
    return (randn(gen, (n,), dtype), torch.randint(0, 7, (n,), generator=gen))

TASK = Task(name="rounded_dependence", category="reduce", description="depends on t below bfloat16's resolution",
            reference=reference, make_inputs=make_inputs, dtypes=["bfloat16"],
            shapes=[Shape("small", {"n": 1000}, "small")],
            contract=AllClose(tolerances={"bfloat16": Tol(2e-2, 2e-2)}),
            flops=lambda s: s["n"], bytes=lambda s, d: 8 * s["n"])
'''


def test_an_input_whose_effect_rounds_away_at_the_tasks_dtype_still_counts(tmp_path):
    """Whether the output depends on an input is asked in float64 when the task's dtype rounds the
    difference away (a bfloat16 NLL mean over millions of reversed targets did, on an H100)."""
    folder = tmp_path / "reduce"
    folder.mkdir()
    (folder / "rounded_dependence.py").write_text(textwrap.dedent(ROUNDED_DEPENDENCE_TASK))
    v = validate_task(load_task_file(folder / "rounded_dependence.py"), CPU, shape_roles=("small",))
    assert not any("does not depend on input[1]" in p for p in v.problems), v.problems
