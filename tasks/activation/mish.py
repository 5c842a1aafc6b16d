import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    return torch.nn.functional.mish(x)


def make_inputs(shape, dtype, gen):
    # Scale 6 with outliers out to about +-120: softplus(x) = log(1 + exp(x)) overflows exp in
    # float32 for x > 88 (float16: x > 11) unless the kernel uses softplus's linear branch, and
    # for x << 0 mish ~ x exp(x) underflows smoothly to -0.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=6.0, offset=-1.0, outliers=2e-3),)


def flops(shape):
    return 8.0 * shape["rows"] * shape["cols"]  # exp, log1p, tanh, multiply


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="mish",
    category="activation",
    description="Mish: x * tanh(softplus(x)) of a 2-D tensor, with inputs far beyond exp's range",
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
