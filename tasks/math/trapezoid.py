"""Trapezoidal integration along the last dim with non-uniform sample points:
out[r] = sum_j (x[j+1] - x[j]) * (y[r, j] + y[r, j+1]) / 2, y [R, C], x [C] increasing.

Contract: the default allclose against the float64 integral of the same (rounded) inputs.
Error budget for the sum over C - 1 terms: each row integrates an offset signal (mean 0.5, noise
std 1), so sum |terms| / |sum| is about 2 and a float32 sum in any order has a typical error of
sqrt(C) u * 2 |out| (3e-6 |out| at C = 3001; a worst case of log2(C) u * 2 |out| for a tree and
C u * 2 |out| = 4e-4 |out| for a strictly sequential sum, which is the one order not covered by
rtol 1e-4 in the worst case but is in the typical one). The spacings vary by a factor of up to 3,
so a kernel that assumes uniform spacing fails.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform


def reference(y, x):
    return torch.trapezoid(y, x, dim=-1)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    # Sample points on [~0, ~2]: cumulative sums of spacings drawn uniform in [0.5, 1.5] / C,
    # starting at a random negative origin.
    dx = uniform(gen, (c,), torch.float32, 0.5, 1.5) * (2.0 / c)
    x = torch.cumsum(dx, 0) + uniform(gen, (1,), torch.float32, -1.0, 0.0)
    # Rows: offset 0.5 with per-row scale, N(0, 1) noise and outliers.
    row_scale = uniform(gen, (r, 1), torch.float32, 0.5, 4.0)
    y = (randn(gen, (r, c), torch.float32, scale=1.0, offset=0.5, outliers=1e-3) * row_scale)
    return (y.to(dtype), x.to(dtype))


def flops(shape):
    return 4.0 * shape["rows"] * (shape["cols"] - 1)  # difference, add, multiply, accumulate


def nbytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return float(nbytes((r, c), dtype) + nbytes((c,), dtype) + nbytes((r,), dtype))


TASK = Task(
    name="trapezoid",
    category="math",
    description="torch.trapezoid(y, x, dim=-1): trapezoidal integral of each row of y [R, C] over shared non-uniform sample points x [C]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        # A single interval per row.
        Shape("awkward_c2", {"rows": 5, "cols": 2}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
