import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    return torch.cumsum(x, dim=-1)


def make_inputs(shape, dtype, gen):
    # Zero-mean steps: each row is a random walk that crosses zero many times, so the running
    # sums near zero are judged by atol (x rms) and the rest by rtol.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=1.0, outliers=1e-3),)


def flops(shape):
    return float(shape["rows"] * shape["cols"])


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="cumsum",
    category="math",
    description="torch.cumsum(x, dim=-1) of a 2-D tensor [R, C]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        # Odd row count and a row spanning several blocks with a masked tail (carry across blocks).
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
