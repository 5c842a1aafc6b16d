import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, nbytes, randn, uniform


def reference(x, low, high):
    return torch.clamp(x, min=low, max=high)


def make_inputs(shape, dtype, gen):
    rows, cols = shape["rows"], shape["cols"]
    x = randn(gen, (rows, cols), dtype, scale=2.0, outliers=1e-3)
    # Per-column bounds with low < high, centred off zero, tight enough that a sizeable share of
    # each column is clipped at both ends.
    centre = uniform(gen, (cols,), torch.float32, -1.0, 1.0)
    half = uniform(gen, (cols,), torch.float32, 0.25, 2.0)
    return (x, (centre - half).to(dtype), (centre + half).to(dtype))


def flops(shape):
    return 2.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype) + 2 * shape["cols"] * itemsize(dtype))


TASK = Task(
    name="clamp_columns",
    category="math",
    description="torch.clamp(x, min=low, max=high) of x [R, C] with per-column bounds low, high [C]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        # A single row (bounds broadcast over one row) of odd length.
        Shape("awkward", {"rows": 1, "cols": 100003}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
