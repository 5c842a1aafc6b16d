import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    return torch.mean(x, dim=0)


def make_inputs(shape, dtype, gen):
    # A small positive mean under unit noise (as sum_lastdim): column means range from near zero
    # to well away from it, and a few outliers make the order of additions visible.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=1.0, offset=0.05, outliers=1e-3),)


def flops(shape):
    return float(shape["rows"] * shape["cols"])


def nbytes_moved(shape, dtype):
    return float(nbytes((shape["rows"], shape["cols"]), dtype) + nbytes((shape["cols"],), dtype))


TASK = Task(
    name="mean_dim0",
    category="reduce",
    description="torch.mean(x, dim=0) of a row-major [R, C] -> [C]: a strided reduction over the first dim",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 1024, "cols": 256}, "small"),
        # Odd row count (a partial tile along the reduced dim) and a column count that leaves a
        # masked tail of columns.
        Shape("awkward", {"rows": 3001, "cols": 37}, "awkward"),
        Shape("large", {"rows": 32768, "cols": 4096}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
