import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    # log(sigmoid(x)) = -softplus(-x) = min(x, 0) - log1p(exp(-|x|))
    return torch.nn.functional.logsigmoid(x)


def make_inputs(shape, dtype, gen):
    # Scale 8 with outliers out to about -200: log(sigmoid(x)) computed literally underflows
    # sigmoid to 0 for x < -88 (float32) / -17 (float16) and returns -inf instead of ~x.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=8.0, offset=-2.0, outliers=2e-3, outlier_scale=12.0),)


def flops(shape):
    return 5.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="logsigmoid",
    category="activation",
    description="log(sigmoid(x)) of a 2-D tensor, computed stably for x down to about -200",
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
