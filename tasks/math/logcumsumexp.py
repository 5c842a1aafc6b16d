"""Running log-sum-exp along the last dim: out[r, j] = log(sum_{k <= j} exp(x[r, k])).

Contract: the default allclose against float64 logcumsumexp of the same (rounded) input. Rows are
offset by up to +-120, beyond exp's float32 range (a scan of exp(x) without a running max
overflows or underflows). Error budget: each scan step of a correct kernel adds about u |out| of
rounding, a random walk of sqrt(C) u |out| (C = 3001: ~4e-6 |out|) against rtol 1e-4 |out|, so any
scan order (sequential, blocked, tree) passes. -inf entries (masked positions, exp = 0) are 2% of
the elements, and rows 0 and 2 start with a run of -inf: their outputs are -inf until the first
finite value (-inf - (-inf) = NaN must not leak into the scan).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform


def reference(x):
    return torch.logcumsumexp(x, dim=-1)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    x = randn(gen, (r, c), torch.float32, scale=3.0, outliers=1e-3, outlier_scale=5.0)
    x = x + uniform(gen, (r, 1), torch.float32, -120.0, 120.0)
    masked = uniform(gen, (r, c), torch.float32, 0.0, 1.0) < 0.02
    x = torch.where(masked, torch.full_like(x, float("-inf")), x)
    x[0, : min(c - 1, 5)] = float("-inf")
    if r > 2:
        x[2, : c // 2] = float("-inf")
    return (x.to(dtype),)


def flops(shape):
    return 5.0 * shape["rows"] * shape["cols"]  # max, two exps, add, log per step


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="logcumsumexp",
    category="math",
    description="torch.logcumsumexp(x, dim=-1) of [R, C], rows offset by up to +-120, with -inf entries and leading -inf runs",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        # Odd row count and rows spanning several blocks with a masked tail (carry across blocks).
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
