"""The judge's copies for a worker (a contract's re-run of the candidate) lie in allocations that hold
nothing of the judge's own: a CUDA IPC handle maps its tensor's whole allocation."""

import pytest
import torch

from mkbench.judge import copies_for_worker, forget_export_pool


def test_on_the_cpu_the_copies_are_plain_copies():
    x = torch.arange(6.0)
    (copy, n) = copies_for_worker((x, 3), "cpu")
    assert torch.equal(copy, x) and copy.data_ptr() != x.data_ptr() and n == 3


def _segment(ptr):
    for seg in torch.cuda.memory_snapshot():
        if seg["address"] <= ptr < seg["address"] + seg["total_size"]:
            return seg
    raise AssertionError("no segment holds the pointer")


@pytest.mark.gpu
def test_on_a_gpu_a_copy_for_the_worker_shares_no_allocation_with_the_judges_tensors():
    pristine = torch.ones(1000, device="cuda")  # a small judge tensor: in a shared 2 MiB allocation
    plain = pristine.clone()
    # the premise: a plain copy lands in the judge's own allocation, which the worker would map whole
    assert _segment(plain.data_ptr())["address"] == _segment(pristine.data_ptr())["address"]
    (copy,) = copies_for_worker((pristine,), "cuda")
    seg = _segment(copy.data_ptr())
    assert seg["address"] != _segment(pristine.data_ptr())["address"]
    assert [b["state"] for b in seg["blocks"]].count("active_allocated") == 1  # the copy alone
    assert torch.equal(copy, pristine)
    del copy
    forget_export_pool()
    torch.cuda.empty_cache()
