import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, nbytes, randn, uniform


def reference(x):
    return torch.logsumexp(x, dim=-1)


def make_inputs(shape, dtype, gen):
    rows, cols = shape["rows"], shape["cols"]
    # Each row is offset by a value in [-120, 120]: exp(x) overflows float32 above ~88.7 (float16
    # above ~11) and underflows to zero below ~-103, so a kernel that does not subtract the row
    # max returns inf or -inf. The within-row spread (scale 3, outliers) makes the max term dominate.
    x = randn(gen, (rows, cols), torch.float32, scale=3.0, outliers=1e-3, outlier_scale=5.0)
    offset = uniform(gen, (rows, 1), torch.float32, -120.0, 120.0)
    return ((x + offset).to(dtype),)


def flops(shape):
    return 4.0 * shape["rows"] * shape["cols"]  # max, subtract, exp, add


def nbytes_moved(shape, dtype):
    return float(nbytes((shape["rows"], shape["cols"]), dtype) + shape["rows"] * itemsize(dtype))


TASK = Task(
    name="logsumexp",
    category="math",
    description="torch.logsumexp(x, dim=-1) of a 2-D tensor [R, C] with rows offset far beyond exp's range",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        # Odd row count; rows spanning several blocks with a masked tail.
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
