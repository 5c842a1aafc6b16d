"""Outputs whose shape depends on the data (torch.masked_select keeps as many elements as the mask
has): the judge's cached output structure from one seed must not reject another seed's right answer,
and a wrong length must still be rejected (issue 29: eager itself failed masked_select_compact on its
second seed, on every shape)."""

import json

import pytest
import torch

from mkbench.inputs import generate, seed_for
from mkbench.judge import Judge
from mkbench.plugins import build_registry


def test_data_dependent_output_lengths_are_judged_per_seed():
    task = build_registry().task("masked_select_compact")
    shape = task.shape("small")
    judge = Judge("cpu")
    lengths = set()
    for k in range(3):
        seed = seed_for(7, task.name, shape.name, "float32", k)
        x, mask = generate(task, shape, "float32", seed, "cpu")
        right = torch.masked_select(x, mask)
        lengths.add(right.numel())
        assert judge.check(task, shape, "float32", seed, (right,)).ok, k
        wrong = right[:-1].clone()  # one element short: wrong on any seed
        verdict = judge.check(task, shape, "float32", seed, (wrong,))
        assert not verdict.ok and "has shape" in verdict.message, verdict
    assert len(lengths) > 1  # the seeds really gave different lengths


def test_eager_and_reference_pass_masked_select_on_every_seed(tmp_path, cli):
    code, out, err = cli("run", "--backend", "triton", "--hw", "cpu", "--task", "masked_select_compact",
                         "--shape-role", "small", "--dtype", "float32", "--seeds", "3", "--baselines", "eager",
                         "--no-timing", "--store", tmp_path / "r.sqlite", "--json", tmp_path / "r.json",
                         "--no-progress")
    assert code == 0, err
    rows = [r for r in json.loads((tmp_path / "r.json").read_text())["results"] if r["verdict"] != "skipped"]
    assert {r["method"] for r in rows} == {"eager", "reference"}
    assert all(r["verdict"] == "correct" for r in rows), [(r["method"], r["error"]) for r in rows]


def test_device_is_part_of_the_structure_unless_a_harness_collects_the_results():
    from mkbench.judge import structure_problem
    expected = (((3,), torch.float32, "cpu"),)
    elsewhere = (torch.empty(3, device="meta"),)
    assert structure_problem(elsewhere, expected) == "output[0] is on meta, expected cpu"
    assert structure_problem(elsewhere, expected, any_device=True) is None
    assert "has shape" in structure_problem((torch.empty(4, device="meta"),), expected, any_device=True)


def _harness_task():
    from mkbench import Shape, Task
    from mkbench.contracts import AllClose

    def reference(x):  # a harness that hands its results back on the host, as KernelBench-X's does
        return (x * 2).cpu()

    return Task(name="harness_double", category="activation", description="2x, collected on the host",
                reference=reference, make_inputs=lambda shape, dtype, gen: (torch.randn(shape["n"], generator=gen,
                                                                                         device=gen.device),),
                shapes=[Shape("small", {"n": 1000}, "small")], dtypes=("float32",), contract=AllClose(),
                flops=lambda s: 0.0, bytes=lambda s, d: 0.0, harness_in_call=True)


@pytest.mark.gpu
def test_harness_outputs_on_another_device_are_compared_by_value():
    task = _harness_task()
    shape = task.shape("small")
    judge = Judge("cuda")
    (x,) = generate(task, shape, "float32", 3, "cuda")
    assert judge.check(task, shape, "float32", 3, ((x * 2).contiguous(),)).ok  # on the GPU, reference on the host
    assert not judge.check(task, shape, "float32", 3, ((x * 3).contiguous(),)).ok


def test_a_constant_answer_is_named_and_anything_else_is_not():
    import torch

    from mkbench.judge import constant_answer
    assert constant_answer((torch.zeros(4, 5),)) == "0.0"
    assert constant_answer((torch.zeros(3), torch.ones(2, dtype=torch.bfloat16))) == "0.0, 1.0"
    assert constant_answer((torch.full((3,), 7, dtype=torch.int32),)) == "7"
    assert constant_answer((torch.ones(3, dtype=torch.bool),)) == "1.0"
    assert constant_answer((torch.zeros(3), torch.arange(3.0))) == ""  # one output varies
    assert constant_answer((torch.full((3,), float("nan")),)) == ""    # NaN is never one value
    assert constant_answer((torch.zeros(1),)) == ""                      # one element says nothing
    assert constant_answer((torch.randn(100),)) == ""
