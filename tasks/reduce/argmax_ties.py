"""torch.max over the last dim when ties at the maximum are the rule, not the exception.

Contract, written out:
  * outputs: (values [R], indices [R] int64) = torch.max(x, dim=-1)
  * tie rule: the FIRST index holding the maximum (torch's documented rule, CPU and CUDA)
  * NaN: a NaN is the maximum; the first NaN's index is reported (row 1 holds two NaNs)
  * an all -inf row has maximum -inf at index 0; an all-equal row has index 0
  * comparison: exact for both outputs (the value is one of the inputs)
Every row draws from 8 float32 levels, so the row maximum occurs about C / 8 times: a parallel
reduction that merges partial results without preferring the lower index fails. (The existing
argmax_lastdim task covers continuous inputs, where ties almost never happen.)
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randint, randn

LEVELS = 8


def reference(x):
    values, indices = torch.max(x, dim=-1)
    return values, indices


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    # Per-row pools of 8 levels with full float32 mantissas, negative offset (a max initialised to
    # 0 is wrong). The top level is made rarer in the first half of each row, so the first
    # occurrence of the maximum lands anywhere, often deep into the row.
    pools = randn(gen, (r, LEVELS), torch.float32, scale=2.0, offset=-3.0)
    level = randint(gen, (r, c), 0, LEVELS)
    top = pools.argmax(dim=-1, keepdim=True)
    first_half = torch.arange(c, device=gen.device).view(1, c) < c // 2
    level = torch.where(first_half & (level == top) & (randint(gen, (r, c), 0, 4) > 0), (top + 1) % LEVELS, level)
    x = torch.gather(pools, 1, level)
    if r > 1 and c > 2:
        x[1, c // 2] = float("nan")
        x[1, c - 1] = float("nan")
    if r > 3:
        x[3] = float("-inf")
    if r > 5:
        x[5] = pools[5, 0]
    return (x.to(dtype),)


def flops(shape):
    return float(shape["rows"] * shape["cols"])


def nbytes_moved(shape, dtype):
    r = shape["rows"]
    return float(nbytes((r, shape["cols"]), dtype) + nbytes((r,), dtype) + nbytes((r,), torch.int64))


TASK = Task(
    name="argmax_ties",
    category="reduce",
    description="torch.max(x, dim=-1) of [R, C] drawn from 8 levels per row (many ties) -> (values, int64 indices); first index wins, NaN is the max",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Exact(description=(
        "exact values and int64 indices of torch.max(x, -1): ties take the first index; NaN is the maximum (first NaN); "
        "all -inf rows give (-inf, 0)")),
    flops=flops,
    bytes=nbytes_moved,
)
