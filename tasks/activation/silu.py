import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    return torch.nn.functional.silu(x)


def make_inputs(shape, dtype, gen):
    # Both signs, with outliers far enough negative that a naive x / (1 + exp(-x)) overflows
    # exp in float16 (x < -11), and far positive where silu(x) ~ x.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=4.0, offset=-1.0, outliers=1e-2, outlier_scale=6.0),)


def flops(shape):
    return 5.0 * shape["rows"] * shape["cols"]  # exp counted as one op


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="silu",
    category="activation",
    description="SiLU / swish x * sigmoid(x) of a 2-D tensor",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        # A single row whose length is not a multiple of any block size.
        Shape("awkward", {"rows": 1, "cols": 100003}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
