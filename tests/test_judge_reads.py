"""How many values a judge's check reads back from its tensors: on a GPU each read waits for a device
that every lane shares (no MPS: other processes' kernels time-slice with the judge's), and on an
H200 main job a candidate unit's ~45 checks took 10 s where the comparisons are milliseconds of work
(reports/2026-11-27-compile-ahead). The closeness check reads twice for a finite reference, the
input-mutation check once per input, the constant-answer check once per output."""

import pytest
import torch

from mkbench.contracts import Tol, compare_close
from mkbench.inputs import same
from mkbench.judge import constant_answer


class Reads:
    """Counts the ways a tensor's value reaches Python: bool(), float(), int(), .item(), .tolist(),
    torch.equal."""

    NAMES = ("__bool__", "__float__", "__int__", "item", "tolist")

    def __init__(self, monkeypatch):
        self.count = 0
        for name in self.NAMES:
            monkeypatch.setattr(torch.Tensor, name, self._counting(getattr(torch.Tensor, name)))
        monkeypatch.setattr(torch, "equal", self._counting(torch.equal))

    def _counting(self, fn):
        def read(*args, **kwargs):
            self.count += 1
            return fn(*args, **kwargs)
        return read


@pytest.fixture
def reads(monkeypatch):
    return Reads(monkeypatch)


def test_the_closeness_check_reads_twice_for_a_finite_reference(reads):
    ref = torch.randn(64, 32, dtype=torch.float64)
    assert compare_close(ref.to(torch.float32), ref, Tol(1e-4, 1e-4)).ok
    assert reads.count == 2
    bad = ref.to(torch.float32)
    bad[3, 4] += 1.0
    reads.count = 0
    res = compare_close(bad, ref, Tol(1e-4, 1e-4))
    assert not res.ok and "1/2048 elements" in res.message and reads.count == 2


def test_the_mutation_check_reads_once_per_input(reads):
    a = torch.randn(100)
    a[3] = float("nan")
    assert same(a, a.clone()) and reads.count == 1
    b = a.clone()
    b[5] = 0.5
    reads.count = 0
    assert not same(a, b) and reads.count == 1


def test_the_constant_answer_check_reads_once_per_output(reads):
    assert constant_answer((torch.zeros(10), torch.zeros(3))) == "0.0" and reads.count == 2
    reads.count = 0
    assert constant_answer((torch.arange(10.0),)) == "" and reads.count == 1
