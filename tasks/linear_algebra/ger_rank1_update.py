"""BLAS ger: out = A + alpha * x y^T, A [M, N], x [M], y [N], out of place (A is not modified)."""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, randn


def reference(a, x, y, alpha):
    return a + alpha * torch.outer(x, y)


def make_inputs(shape, dtype, gen):
    m, n = shape["M"], shape["N"]
    # The update is as large as A (rms ~ 1 each), so returning A unchanged fails, and the sum
    # cancels in places, where atol (x rms) takes over from rtol.
    a = randn(gen, (m, n), dtype, scale=1.0, offset=0.1, outliers=1e-3, outlier_scale=8.0)
    x = randn(gen, (m,), dtype, scale=1.0, offset=0.2, outliers=1e-3, outlier_scale=8.0)
    y = randn(gen, (n,), dtype, scale=1.0, offset=-0.1)
    return (a, x, y, -0.8)


def flops(shape):
    return 2.0 * shape["M"] * shape["N"]


def nbytes_moved(shape, dtype):
    m, n = shape["M"], shape["N"]
    return float((2 * m * n + m + n) * itemsize(dtype))


TASK = Task(
    name="ger_rank1_update",
    category="linear_algebra",
    description="BLAS ger rank-1 update out = A + alpha x y^T, A [M, N], x [M], y [N] (alpha -0.8), out of place",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 256, "N": 384}, "small"),
        Shape("awkward", {"M": 1, "N": 4099}, "awkward"),
        # A read and out written: 2 x 256 MiB in float32.
        Shape("large", {"M": 8192, "N": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
