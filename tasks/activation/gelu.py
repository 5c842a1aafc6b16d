import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    return torch.nn.functional.gelu(x)


def make_inputs(shape, dtype, gen):
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=3.0, offset=-0.5, outliers=1e-3),)


def flops(shape):
    return 8.0 * shape["rows"] * shape["cols"]  # erf counted as a handful of FLOPs


def nbytes_moved(shape, dtype):
    return 2 * nbytes((shape["rows"], shape["cols"]), dtype)


TASK = Task(
    name="gelu",
    category="activation",
    description="exact (erf) GELU of a 2-D tensor",
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
