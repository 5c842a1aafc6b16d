"""The closeness check compares an output in slices (``contracts.COMPARE_SLICE`` elements): its float64
temporaries were the judge's peak memory for elementwise tasks (on the CPU, comparing a 2^26-element
bfloat16 output held 2.83 GiB at its peak, against 0.52 GiB in slices of 2^23). The verdict and the
numbers it reports must not depend on the slicing, beyond the rounding of the rms."""

import random

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from mkbench import contracts
from mkbench.contracts import DEFAULT_TOLERANCES, Tol, compare_close


def _case(rng: random.Random):
    dtype = rng.choice([torch.float32, torch.float16, torch.bfloat16, torch.float64])
    n = rng.choice([0, 1, 5, 37, 100, 1000])
    ref = torch.randn(n, dtype=torch.float64) * rng.choice([1e-40, 1e-3, 1.0, 1e4])
    if n and rng.random() < 0.3:
        for _ in range(rng.randint(1, 3)):
            ref[rng.randrange(n)] = rng.choice([float("nan"), float("inf"), -float("inf")])
    out = (ref + torch.randn(n, dtype=torch.float64) * rng.choice([0.0, 1e-6, 1e-3, 1e-1])).to(dtype)
    if n and rng.random() < 0.2:
        out[rng.randrange(n)] = rng.choice([float("nan"), float("inf"), 3.0])
    extra = torch.rand(n, dtype=torch.float64) * 1e-3 if rng.random() < 0.2 else None
    return out, ref, rng.choice(list(DEFAULT_TOLERANCES.values())), rng.choice(["rms", "abs"]), extra


def test_slicing_does_not_change_the_verdict(monkeypatch):
    rng, failed = random.Random(7), 0
    for _ in range(600):
        out, ref, tol, scale, extra = _case(rng)
        whole = compare_close(out, ref, tol, scale, extra=extra)
        monkeypatch.setattr(contracts, "COMPARE_SLICE", rng.choice([1, 3, 7, 64]))
        sliced = compare_close(out, ref, tol, scale, extra=extra)
        monkeypatch.setattr(contracts, "COMPARE_SLICE", 1 << 23)
        failed += not whole.ok
        assert sliced.ok == whole.ok
        assert sliced.max_abs_err == whole.max_abs_err
        assert sliced.message.split(" (worst")[0] == whole.message.split(" (worst")[0]
        if scale == "abs":  # no rms, so nothing to round differently: the same element and numbers
            assert (sliced.message, sliced.max_rel_err) == (whole.message, whole.max_rel_err)
        elif whole.max_rel_err is not None:
            assert sliced.max_rel_err == pytest.approx(whole.max_rel_err, rel=1e-12)
    assert 50 < failed < 550  # both verdicts were exercised


def test_the_worst_element_is_the_first_largest_margin_across_slices(monkeypatch):
    monkeypatch.setattr(contracts, "COMPARE_SLICE", 4)
    ref = torch.zeros(16, dtype=torch.float64)
    out = ref.clone()
    out[6], out[9], out[13] = 5.0, 7.0, 7.0  # slices 1, 2, 3: the largest first in slice 2
    res = compare_close(out, ref, Tol(1e-4, 1e-4), "abs")
    assert not res.ok and "3/16 elements" in res.message and "got 7," in res.message and res.max_abs_err == 7.0


def test_nonfinite_positions_are_matched_in_every_slice(monkeypatch):
    monkeypatch.setattr(contracts, "COMPARE_SLICE", 3)
    ref = torch.arange(10, dtype=torch.float64)
    ref[8] = float("inf")
    out = ref.to(torch.float32)
    assert compare_close(out, ref, Tol(1e-4, 1e-4)).ok
    out[8] = -float("inf")
    assert "signs differ" in compare_close(out, ref, Tol(1e-4, 1e-4)).message
    out[8], out[2] = float("inf"), float("nan")
    assert "NaN positions differ at 1" in compare_close(out, ref, Tol(1e-4, 1e-4)).message


class LargestNew(TorchDispatchMode):
    """The most elements of any operation's result in new memory (views share their input's)."""

    def __init__(self):
        super().__init__()
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        given = {a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor)}
        for t in result if isinstance(result, (tuple, list)) else (result,):
            if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in given:
                self.largest = max(self.largest, t.numel())
        return result


@pytest.mark.parametrize("nonfinite", [False, True])
def test_no_temporary_is_larger_than_a_slice(monkeypatch, nonfinite):
    monkeypatch.setattr(contracts, "COMPARE_SLICE", 1000)
    ref = torch.randn(10_000, dtype=torch.float64)
    if nonfinite:
        ref[17] = float("nan")
    out = ref.to(torch.bfloat16)
    with LargestNew() as seen:
        assert compare_close(out, ref, DEFAULT_TOLERANCES["bfloat16"]).ok
    assert seen.largest <= 1000
