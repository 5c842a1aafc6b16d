import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

KERNEL, STRIDE, PADDING = 3, 2, 1


def out_size(n):
    return (n + 2 * PADDING - KERNEL) // STRIDE + 1


def reference(x):
    return torch.nn.functional.max_pool2d(x, kernel_size=KERNEL, stride=STRIDE, padding=PADDING)


def make_inputs(shape, dtype, gen):
    # Mostly negative values: a kernel that pads with 0 instead of -inf gets the border wrong.
    return (randn(gen, (shape["N"], shape["C"], shape["H"], shape["W"]), dtype, scale=1.0, offset=-2.5, outliers=1e-3),)


def flops(shape):
    # 8 comparisons per output window
    return 8.0 * shape["N"] * shape["C"] * out_size(shape["H"]) * out_size(shape["W"])


def nbytes_moved(shape, dtype):
    n, c = shape["N"], shape["C"]
    return nbytes((n, c, shape["H"], shape["W"]), dtype) + nbytes((n, c, out_size(shape["H"]), out_size(shape["W"])), dtype)


TASK = Task(
    name="max_pool2d",
    category="pooling",
    description="2-D max pooling, kernel 3, stride 2, padding 1 (implicit -inf padding), on NCHW",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 16, "H": 32, "W": 32}, "small"),
        Shape("awkward", {"N": 1, "C": 19, "H": 33, "W": 47}, "awkward"),
        Shape("large", {"N": 64, "C": 192, "H": 112, "W": 112}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
