import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    return torch.nn.functional.hardswish(x)


def make_inputs(shape, dtype, gen):
    # Spread over all three pieces: x <= -3 (zero), -3 < x < 3 (x * (x + 3) / 6), x >= 3 (x).
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=3.5, offset=-0.5, outliers=1e-3),)


def flops(shape):
    return 5.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="hardswish",
    category="activation",
    description="hardswish x * relu6(x + 3) / 6 of a 2-D tensor",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
