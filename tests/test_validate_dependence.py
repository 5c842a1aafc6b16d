"""`mkbench validate`'s "the output depends on every input" check (issue 29): a bfloat16 mean over
many terms that a changed input moves by less than one bfloat16 step is not flagged (it was, for
nll_loss_ignore_index large/bfloat16 on an H100), an output that really ignores an input still is,
and a reference that cannot run in float64 is asked in float32 instead of raising."""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.plugins import build_registry
from mkbench.validate import _perturb_input, dependence_problem, validate_task

N = 1 << 14  # terms per mean: a change of about 1e-4 relative, below bfloat16's 2^-8 step


def _inputs(shape, dtype, gen):
    b, c, n = shape["B"], shape["C"], shape["n"]
    # values near 10 with a small spread: the mean sits where a bfloat16 step is 1/16 and
    # picking other classes moves it by far less
    x = (10.0 + 0.01 * torch.randn(b, c, n, generator=gen, device=gen.device)).to(dtype)
    target = torch.randint(0, c, (b, n), generator=gen, device=gen.device)
    return (x, target)


def _picked_mean(x, target):
    """out[b] = mean_n x[b, target[b, n], n]: like nll_loss's mean, it depends on every target."""
    wide = torch.promote_types(x.dtype, torch.float32)
    return x.to(wide).gather(1, target.unsqueeze(1)).squeeze(1).mean(dim=1).to(x.dtype)


def _ignores_target(x, target):
    """The same mean over the first class only: the targets are taken and never read."""
    wide = torch.promote_types(x.dtype, torch.float32)
    return x.to(wide)[:, 0, :].mean(dim=1).to(x.dtype)


def _no_float64(x, target):
    """The picked mean, from a reference with no float64 path (as an op without a float64 kernel)."""
    if x.dtype == torch.float64:
        raise RuntimeError('"gather_cpu" not implemented for \'Double\'')
    return _picked_mean(x, target)


def _task(name, reference):
    return Task(name=name, category="loss", description="a fake task for the dependence check",
                reference=reference, make_inputs=_inputs,
                shapes=[Shape("small", {"B": 4, "C": 5, "n": N}, "small")], dtypes=("bfloat16",),
                contract=AllClose(), flops=lambda s: 0.0, bytes=lambda s, d: 0.0)


def _first_inputs(task):
    shape = task.shape("small")
    gen = torch.Generator().manual_seed(5)
    return shape, task.make_inputs(shape, torch.bfloat16, gen)


def test_the_fixture_rounds_the_change_away_in_bfloat16():
    # the premise of the tests below: at the task's dtype the changed targets give bit-equal outputs
    _, (x, target) = _first_inputs(_task("picked_mean", _picked_mean))
    assert torch.equal(_picked_mean(x, target), _picked_mean(x, _perturb_input(target)))
    assert not torch.equal(_picked_mean(x.double(), target), _picked_mean(x.double(), _perturb_input(target)))


def test_a_mean_below_bfloat16_resolution_is_not_flagged():
    task = _task("picked_mean", _picked_mean)
    _, inputs = _first_inputs(task)
    first = (_picked_mean(*inputs),)
    assert dependence_problem(task, inputs, 0, first) is None
    assert dependence_problem(task, inputs, 1, first) is None


def test_an_output_that_ignores_an_input_is_still_flagged():
    task = _task("ignores_target", _ignores_target)
    _, inputs = _first_inputs(task)
    first = (_ignores_target(*inputs),)
    assert dependence_problem(task, inputs, 0, first) is None
    assert dependence_problem(task, inputs, 1, first) == (
        "the output does not depend on input[1] (not at the task's dtype, nor with the floating inputs in float64)")


def test_a_reference_without_float64_is_asked_in_float32():
    task = _task("no_float64", _no_float64)
    _, inputs = _first_inputs(task)
    first = (_no_float64(*inputs),)
    assert dependence_problem(task, inputs, 1, first) is None  # float32 represents the change

    def no_float64_ignoring(x, target):
        if x.dtype == torch.float64:
            raise RuntimeError("no float64")
        return _ignores_target(x, target)

    ignoring = _task("no_float64_ignoring", no_float64_ignoring)
    assert dependence_problem(ignoring, inputs, 1, (no_float64_ignoring(*inputs),)) == (
        "the output does not depend on input[1] (not at the task's dtype, nor with the floating inputs in float32)")


def test_validate_task_flags_only_the_independent_task():
    hw = build_registry().hardware["cpu"]
    ok = validate_task(_task("picked_mean", _picked_mean), hw)
    assert not [p for p in ok.problems if "does not depend" in p], ok.problems
    bad = validate_task(_task("ignores_target", _ignores_target), hw)
    assert [p for p in bad.problems if "does not depend" in p] == [
        "small/bfloat16: the output does not depend on input[1] (not at the task's dtype, nor with the floating "
        "inputs in float64)"]
