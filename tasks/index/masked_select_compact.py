"""Stream compaction: torch.masked_select(x, mask), the elements of x where mask is True, in
row-major order (stable), as a 1-D tensor whose length is the number of True elements.

The output length depends on the data, so a kernel has to count before (or while) it writes:
a prefix sum over the mask gives each kept element its output position. Rows 0 and 1 of every
input are all-True and all-False; the rest keep a fraction p at random, partly in runs (an
element is kept if it is drawn, with probability q, or if its left neighbour was drawn and a coin
of probability 0.6 extends the run; q solves q + 0.6 q (1 - q) = p).
Exact: values are copied.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import itemsize, randn


def reference(x, mask):
    return torch.masked_select(x, mask)


def make_inputs(shape, dtype, gen):
    r, c, p = shape["R"], shape["C"], shape["p"]
    x = randn(gen, (r, c), dtype, scale=1.0, offset=0.1, outliers=1e-3)
    q = (1.6 - (2.56 - 2.4 * p) ** 0.5) / 1.2  # keep rate q + 0.6 q (1 - q) = p
    start = torch.rand((r, c), generator=gen, device=gen.device) < q
    follow = torch.rand((r, c), generator=gen, device=gen.device) < 0.6
    mask = start.clone()
    mask[:, 1:] |= start[:, :-1] & follow[:, 1:]
    mask[0] = True
    if r > 1:
        mask[1] = False
    return (x, mask)


def flops(shape):
    return float(shape["R"] * shape["C"])  # one prefix-sum addition per element


def nbytes_moved(shape, dtype):
    # x and the mask read once; the kept fraction (about p) written once.
    r, c, p = shape["R"], shape["C"], shape["p"]
    return float(r * c * (itemsize(dtype) + 1) + p * r * c * itemsize(dtype))


TASK = Task(
    name="masked_select_compact",
    category="index",
    description="torch.masked_select(x, mask) on [R, C]: stable compaction of the kept elements into a 1-D output of "
                "length mask.sum()",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"R": 64, "C": 1024, "p": 0.3}, "small"),
        Shape("awkward", {"R": 7, "C": 4099, "p": 0.5}, "awkward"),
        # 134M elements, about 30% kept: 832 MB of traffic in fp32.
        Shape("large", {"R": 16384, "C": 8192, "p": 0.3}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Exact(),
    flops=flops,
    bytes=nbytes_moved,
)
