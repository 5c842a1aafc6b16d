import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    return torch.nn.functional.softplus(x, beta=1.0, threshold=20.0)


def make_inputs(shape, dtype, gen):
    # Values on both sides of the threshold (x > 20 returns x), large negatives where the result
    # is a tiny exp(x), and the region 11 < x < 20 where a naive log(1 + exp(x)) overflows float16.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=10.0, offset=4.0, outliers=1e-2, outlier_scale=4.0),)


def flops(shape):
    return 4.0 * shape["rows"] * shape["cols"]  # exp and log1p counted as one op each


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="softplus",
    category="activation",
    description="softplus log(1 + exp(x)) with beta=1, threshold=20 (x > 20 returns x) of a 2-D tensor",
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
