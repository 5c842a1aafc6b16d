import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

NEGATIVE_SLOPE = 0.01


def reference(x):
    return torch.nn.functional.leaky_relu(x, negative_slope=NEGATIVE_SLOPE)


def make_inputs(shape, dtype, gen):
    # Mostly negative values with large-magnitude outliers, so the 0.01 slope branch carries
    # outputs well above atol (x rms); a plain relu or an identity fails.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=2.0, offset=-1.0, outliers=1e-2, outlier_scale=50.0),)


def flops(shape):
    return 2.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="leaky_relu",
    category="activation",
    description="leaky ReLU with negative_slope=0.01 of a 2-D tensor",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 1, "cols": 100003}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
