"""Maximum over the middle dim of a [B, M, N] tensor -> [B, N] (torch.amax(x, dim=1)).

The reduced dim is strided (stride N) and the contiguous dim N is kept: a kernel must tile over
N and loop over M, not reduce along memory order. Contract: exact (a max selects an input, no
rounding); NaN propagates as in torch (a NaN anywhere in a column makes that output NaN).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randn


def reference(x):
    return torch.amax(x, dim=1)


def make_inputs(shape, dtype, gen):
    b, m, n = shape["B"], shape["M"], shape["N"]
    x = randn(gen, (b, m, n), torch.float32, scale=1.0, outliers=1e-3)
    # Batch 0 is all negative (a max initialised to 0 is wrong there); the column maxima of the
    # last batch sit in the last row m - 1 (a loop that stops one short fails).
    x[0] -= 10.0
    x[b - 1, m - 1] += 30.0
    # NaN in a few columns of batch 0 (first row, last row, middle); -inf in a column of the last
    # batch (the max is the finite rest); +inf in another.
    x[0, 0, 0] = float("nan")
    x[0, m - 1, n - 1] = float("nan")
    x[0, m // 2, n // 2] = float("nan")
    x[b - 1, : m // 2, n // 3] = float("-inf")
    x[b - 1, m // 3, (2 * n) // 3] = float("inf")
    return (x.to(dtype),)


def flops(shape):
    return float(shape["B"] * shape["M"] * shape["N"])


def nbytes_moved(shape, dtype):
    b, m, n = shape["B"], shape["M"], shape["N"]
    return float(nbytes((b, m, n), dtype) + nbytes((b, n), dtype))


TASK = Task(
    name="amax_middle_dim",
    category="reduce",
    description="torch.amax(x, dim=1) of [B, M, N] -> [B, N]: a max over a strided middle dim; NaN propagates",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"B": 4, "M": 128, "N": 256}, "small"),
        Shape("awkward", {"B": 3, "M": 129, "N": 77}, "awkward"),
        Shape("awkward_n1", {"B": 5, "M": 1000, "N": 1}, "awkward"),
        Shape("large", {"B": 64, "M": 1024, "N": 2048}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Exact(description="exact: torch.amax over dim 1 at the task's dtype; a NaN in a column makes the output NaN"),
    flops=flops,
    bytes=nbytes_moved,
)
