"""Integer remainder with Python / torch.remainder semantics: r = a - b * floor(a / b), so r has
the sign of the divisor b (C's % takes the sign of a instead and fails on mixed signs).

Contract: exact (integer arithmetic, no rounding). Inputs never hold b = 0 (undefined) or the
overflowing pair (a = min, b = -1). Dividends use the dtype's full range, so a kernel that divides
in float32 (24-bit mantissa) or float64 for int64 gets wrong quotients and fails.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randint, uniform


def reference(a, b):
    return torch.remainder(a, b)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    top = 2**31 - 1 if dtype == torch.int32 else 2**62
    a = randint(gen, s, -top, top + 1, dtype)  # never the minimum value
    # Divisors: 60% small (1 .. 100), 30% medium (up to 2^16), 10% as large as the dividends;
    # random sign, never zero.
    small = randint(gen, s, 1, 101, torch.int64)
    medium = randint(gen, s, 1, 2**16, torch.int64)
    large = randint(gen, s, 1, top + 1, torch.int64)
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    mag = torch.where(pick < 0.6, small, torch.where(pick < 0.9, medium, large))
    sign = randint(gen, s, 0, 2, torch.int64) * 2 - 1
    return (a, (mag * sign).to(dtype))


def flops(shape):
    return 3.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(3 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="remainder_int",
    category="math",
    description="torch.remainder(a, b) of two integer [R, C] tensors (Python semantics: sign of the divisor), full-range dividends",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("int32", "int64"),
    contract=Exact(description="exact: r = a - b * floor(a / b) in integer arithmetic (sign of b), as torch.remainder"),
    flops=flops,
    bytes=nbytes_moved,
)
