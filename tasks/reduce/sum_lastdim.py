import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    return torch.sum(x, dim=-1)


def make_inputs(shape, dtype, gen):
    # A small positive mean under unit noise: row sums range from near zero (atol matters) to
    # well away from it, and a few outliers make the order of additions visible.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=1.0, offset=0.05, outliers=1e-3),)


def flops(shape):
    return float(shape["rows"] * shape["cols"])


def nbytes_moved(shape, dtype):
    return float(nbytes((shape["rows"], shape["cols"]), dtype) + nbytes((shape["rows"],), dtype))


TASK = Task(
    name="sum_lastdim",
    category="reduce",
    description="torch.sum(x, dim=-1) of a 2-D tensor [R, C] -> [R]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        # Odd row count (a partial tile of rows) and a row length that leaves a masked tail.
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
