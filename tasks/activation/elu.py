import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

ALPHA = 1.0


def reference(x):
    return torch.nn.functional.elu(x, alpha=ALPHA)


def make_inputs(shape, dtype, gen):
    # Both branches in about equal measure (offset -0.3, scale 3): x > 0 is the identity, x <= 0
    # is alpha (exp(x) - 1), saturating at -alpha for the outliers (out to about -60).
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=3.0, offset=-0.3, outliers=1e-3),)


def flops(shape):
    return 4.0 * shape["rows"] * shape["cols"]  # compare, exp, subtract, multiply


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="elu",
    category="activation",
    description="ELU with alpha = 1: x for x > 0, alpha (exp(x) - 1) otherwise, of a 2-D tensor",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
