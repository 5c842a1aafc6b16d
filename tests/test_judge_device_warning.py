"""A harness that collects its results in the call (``Task.harness_in_call``) may hand them back on
another device than the reference's: they are compared by value on the reference's device, and the
move is recorded as a warning on the row, never as a verdict (issue 29).

On a CPU-only machine no output can really come back on another device with values to compare (a
meta tensor has none), so the warning's builder is tested with fake device objects, and the judge's
and rows' handling of it with the builder replaced."""

from types import SimpleNamespace

import torch

import mkbench.judge as judge_mod
from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.engine.observation import Check, CheckStatus, ComboObservation, Compiled, Observation
from mkbench.engine.plan import Unit
from mkbench.engine.rows import decide
from mkbench.inputs import generate
from mkbench.integrity import Policy
from mkbench.judge import Judge, device_moved_warning
from mkbench.verdicts import Verdict


def _on(device_type):
    return SimpleNamespace(device=SimpleNamespace(type=device_type))


def test_the_warning_names_each_output_moved_and_both_devices():
    expected = (((3,), torch.float32, "cpu"), ((2,), torch.float32, "cpu"), ((1,), torch.float32, "cuda"))
    assert device_moved_warning((_on("cpu"), _on("cpu"), _on("cuda")), expected) is None
    assert device_moved_warning((_on("cuda"), _on("cpu"), _on("cpu")), expected) == (
        "output[0] on cuda, the reference's on cpu; output[2] on cpu, the reference's on cuda: "
        "moved to the reference's device and compared by value")


def _harness_task(harness_in_call=True):
    def reference(x):
        return (x * 2).cpu()

    return Task(name="harness_double", category="activation", description="2x, collected on the host",
                reference=reference,
                make_inputs=lambda shape, dtype, gen: (torch.randn(shape["n"], generator=gen, device=gen.device),),
                shapes=[Shape("small", {"n": 1000}, "small")], dtypes=("float32",), contract=AllClose(),
                flops=lambda s: 0.0, bytes=lambda s, d: 0.0, harness_in_call=harness_in_call)


def test_same_device_gives_no_warning():
    task = _harness_task()
    shape = task.shape("small")
    (x,) = generate(task, shape, "float32", 3, "cpu")
    res = Judge("cpu").check(task, shape, "float32", 3, ((x * 2).contiguous(),))
    assert res.ok and res.warning == "" and res.as_dict()["warning"] == ""


def test_the_judge_carries_the_warning_and_the_verdict_stays_the_values(monkeypatch):
    seen = []

    def fake(outputs, expected):
        seen.append(([o.device.type for o in outputs], [e[2] for e in expected]))
        return "output[0] on cuda, the reference's on cpu: moved to the reference's device and compared by value"

    monkeypatch.setattr(judge_mod, "device_moved_warning", fake)
    task = _harness_task()
    shape = task.shape("small")
    (x,) = generate(task, shape, "float32", 3, "cpu")
    right = Judge("cpu").check(task, shape, "float32", 3, ((x * 2).contiguous(),))
    wrong = Judge("cpu").check(task, shape, "float32", 3, ((x * 3).contiguous(),))
    assert right.ok and right.warning.startswith("output[0] on cuda, the reference's on cpu")
    assert right.as_dict()["warning"] == right.warning
    assert not wrong.ok and wrong.warning == right.warning  # said beside a failure too, which stays one
    assert seen == [(["cpu"], ["cpu"]), (["cpu"], ["cpu"])]
    # a task without a harness in the call is never asked: its device is part of the structure
    plain = _harness_task(harness_in_call=False)
    assert Judge("cpu").check(plain, shape, "float32", 3, ((x * 2).contiguous(),)).warning == ""
    assert len(seen) == 2


def test_the_warning_goes_on_the_row_and_the_verdict_stays_correct():
    shapes = {"small": SimpleNamespace(name="small", params={"n": 4}, role="bench")}
    task = SimpleNamespace(name="t", category="c", shape=shapes.__getitem__, flops=lambda s: 8.0,
                           bytes=lambda s, d: 64.0, harness_in_call=True)
    backend = SimpleNamespace(name="triton", is_baseline=False, stream_timed=True)
    unit = Unit(task=task, backend=backend, hw=SimpleNamespace(device="cpu"), method="m", source=None,
                combos=[("small", "float32")], skipped=[], own_names=["my_kernel"])
    warning = "output[0] on cuda, the reference's on cpu: moved to the reference's device and compared by value"
    combo = ComboObservation(check=Check(CheckStatus.CORRECT, "", 0.0, 0.0), launches=1, judge_warning=warning)
    obs = Observation(compile=Compiled(True, "", {}), abnormal=None, lane="cpu/lane0", seconds={}, steps={},
                      combos={("small", "float32"): combo})
    (row,) = decide(obs, Policy(), unit, timed=False)
    assert row.verdict == Verdict.CORRECT and row.error is None
    assert row.as_dict()["extra"]["judge_warning"] == warning
