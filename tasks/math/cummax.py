"""Running maximum along the last dim with its indices (torch.cummax).

Contract, written out:
  * values[r, j] = max(x[r, :j+1]); indices[r, j] = the index of that maximum (int64)
  * tie rule (torch's): the running maximum moves to position j whenever x[r, j] >= the current
    maximum, so among equal maxima the LAST index so far is reported
  * NaN (torch's): a NaN always becomes the running maximum (value NaN, index of the latest NaN)
    and stays it: later numbers never compare >= NaN
  * comparison: exact for both outputs (values are selected inputs, no rounding)
Ties are frequent by construction: every value comes from a pool of 64 float32 levels, so a
kernel that keeps the first index of a tie (strict >) fails.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randint, randn

LEVELS = 64


def reference(x):
    values, indices = torch.cummax(x, dim=-1)
    return values, indices


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    # Sorted pool of 64 levels with full float32 mantissas (not bfloat16 values). Column j draws a
    # level from a window that climbs with j, so new maxima keep appearing along the row while the
    # current maximum recurs (a tie) every few dozen columns.
    pool = torch.sort(randn(gen, (LEVELS,), torch.float32, scale=3.0, offset=-1.0)).values
    climb = (torch.arange(c, device=gen.device) * (LEVELS - 16) // max(c, 1)).view(1, c)
    level = randint(gen, (r, c), 0, 16) + climb
    x = pool[level]
    # NaN in row 1 (at a third of the row) and row 3 (twice: a third and two thirds); row 5 is
    # all equal (every position ties).
    if r > 1 and c > 2:
        x[1, c // 3] = float("nan")
    if r > 3 and c > 2:
        x[3, c // 3] = float("nan")
        x[3, (2 * c) // 3] = float("nan")
    if r > 5:
        x[5] = pool[LEVELS // 2]
    return (x.to(dtype),)


def flops(shape):
    return float(shape["rows"] * shape["cols"])


def nbytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return float(2 * nbytes((r, c), dtype) + nbytes((r, c), torch.int64))


TASK = Task(
    name="cummax",
    category="math",
    description="torch.cummax(x, dim=-1) of [R, C] -> (values, int64 indices); ties report the last index, NaN propagates",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Exact(description=(
        "exact values and int64 indices; ties (x >= running max) move the index to the latest position; "
        "a NaN becomes and stays the maximum, index of the latest NaN")),
    flops=flops,
    bytes=nbytes_moved,
)
