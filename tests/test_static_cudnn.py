"""The static scan names a candidate that turns cuDNN off with ``torch.backends.cudnn.flags()``, whose
``enabled`` defaults to False: CUDA-L1's cudnn-variant kernels do so meaning to set ``benchmark``, and
their convolutions then run PyTorch's per-sample fallbacks (reports/2026-11-28-cuda-l1, call 7)."""

import pytest

from mkbench.static_checks import scan_python

TEMPLATE = """import torch
import torch.nn as nn
from torch.backends import cudnn

class ModelNew(nn.Module):
    def forward(self, x):
        with {call}:
            return x
"""


@pytest.mark.parametrize("call, off", [
    ("torch.backends.cudnn.flags(benchmark=True)", True),
    ("torch.backends.cudnn.flags(benchmark=True, deterministic=False, allow_tf32=True)", True),
    ("torch.backends.cudnn.flags(enabled=False)", True),
    ("torch.backends.cudnn.flags(False, True)", True),
    ("cudnn.flags(benchmark=True)", True),  # through the module's alias
    ("torch.backends.cudnn.flags(enabled=True, benchmark=True)", False),
    ("torch.backends.cudnn.flags(True, True)", False),
    ("torch.backends.cudnn.flags(enabled=self.use_cudnn)", False),  # not known statically: not said
    ("torch.backends.cudnn.flags(**self.flags)", False),
    ("torch.no_grad()", False),
])
def test_cudnn_turned_off_by_flags(call, off):
    found = [f for f in scan_python(TEMPLATE.format(call=call)) if f.check == "cudnn_off"]
    assert bool(found) == off
    if off:
        assert found[0].line == 7 and "turns cuDNN off" in found[0].message
