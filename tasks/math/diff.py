"""First-order finite difference along the middle dim: out[b, t, d] = x[b, t+1, d] - x[b, t, d].

Contract: the default allclose against the float64 difference of the same (rounded) inputs. The
inputs are random walks along T around per-channel offsets of up to +-50, so consecutive values
are close and one subtraction in the input dtype is exact (Sterbenz) or nearly so: a correct
kernel matches to the last bit or two, while reading the wrong neighbour, the wrong stride or
rounding through a narrower type does not. The differenced dim is not the contiguous one (stride D).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform


def reference(x):
    return torch.diff(x, n=1, dim=1)


def make_inputs(shape, dtype, gen):
    b, t, d = shape["B"], shape["T"], shape["D"]
    steps = randn(gen, (b, t, d), torch.float32, scale=1.0, offset=0.05, outliers=1e-3, outlier_scale=10.0)
    offset = uniform(gen, (b, 1, d), torch.float32, -50.0, 50.0)
    return ((offset + torch.cumsum(steps, dim=1)).to(dtype),)


def flops(shape):
    return float(shape["B"] * (shape["T"] - 1) * shape["D"])


def nbytes_moved(shape, dtype):
    b, t, d = shape["B"], shape["T"], shape["D"]
    return float(nbytes((b, t, d), dtype) + nbytes((b, t - 1, d), dtype))


TASK = Task(
    name="diff",
    category="math",
    description="torch.diff(x, dim=1) of [B, T, D] -> [B, T-1, D]: first difference along the strided middle dim",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"B": 4, "T": 64, "D": 256}, "small"),
        # Odd sizes everywhere; the second one leaves a single difference per (b, d).
        Shape("awkward", {"B": 3, "T": 129, "D": 77}, "awkward"),
        Shape("awkward_t2", {"B": 5, "T": 2, "D": 1001}, "awkward"),
        Shape("large", {"B": 64, "T": 2048, "D": 1024}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
