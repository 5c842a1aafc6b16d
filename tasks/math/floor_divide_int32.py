"""Integer floor division of int32 tensors: q = floor(a / b) (torch.floor_divide, Python's //).

Contract: exact. Floor, not truncation: for operands of opposite signs with a non-zero remainder
q is one less than C's a / b, and half the pairs here have opposite signs. Inputs never hold
b = 0 or the overflowing pair (a = -2^31, b = -1). Dividends use the full int32 range, so a kernel
that divides in float32 (24-bit mantissa) rounds the quotient and fails.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randint, uniform

INT32_MAX = 2**31 - 1


def reference(a, b):
    return torch.floor_divide(a, b)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    a = randint(gen, s, -INT32_MAX, INT32_MAX + 1, torch.int32)
    # Divisors: 50% small (1 .. 64, including 1), 35% up to 2^16, 15% up to 2^31 - 1; random sign.
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    mag = torch.where(pick < 0.5, randint(gen, s, 1, 65), torch.where(
        pick < 0.85, randint(gen, s, 1, 2**16), randint(gen, s, 1, INT32_MAX + 1)))
    sign = randint(gen, s, 0, 2) * 2 - 1
    return (a, (mag * sign).to(torch.int32))


def flops(shape):
    return 2.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    # int32 in and out whatever the nominal dtype.
    return float(3 * nbytes((shape["rows"], shape["cols"]), torch.int32))


TASK = Task(
    name="floor_divide_int32",
    category="math",
    description="torch.floor_divide(a, b) of two int32 [R, C] tensors (floor, not truncation), full-range dividends",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        # 2 x 4 B in + 4 B out per element: 12 x 48M = 576 MiB.
        Shape("large", {"rows": 8192, "cols": 6144}, "large"),
    ],
    dtypes=("int32",),
    contract=Exact(description="exact: q = floor(a / b) in int32 arithmetic (rounds toward -inf, as Python // and torch.floor_divide)"),
    flops=flops,
    bytes=nbytes_moved,
)
