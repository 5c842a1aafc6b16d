import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    return torch.cumprod(x, dim=-1)


def make_inputs(shape, dtype, gen):
    # Factors 1 + 0.01 * randn: the log of a running product is a random walk with step ~0.01, so
    # over 8192 columns products stay within about exp(+-4) (no overflow or underflow) while still
    # drifting far from 1; every factor moves every later output.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=0.01, offset=1.0),)


def flops(shape):
    return float(shape["rows"] * shape["cols"])


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="cumprod",
    category="math",
    description="torch.cumprod(x, dim=-1) of a 2-D tensor [R, C] with factors near 1",
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
