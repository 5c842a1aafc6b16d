import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x, weight, bias):
    return torch.nn.functional.conv2d(x, weight, bias, stride=1, padding=1, groups=x.shape[1])


def make_inputs(shape, dtype, gen):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    x = randn(gen, (n, c, h, w), dtype, scale=1.5, offset=0.25, outliers=1e-3)
    weight = randn(gen, (c, 1, 3, 3), dtype, scale=0.4, offset=0.05)
    bias = randn(gen, (c,), dtype, scale=0.5)
    return (x, weight, bias)


def flops(shape):
    # 9 multiply-adds per output plus the bias add
    return 19.0 * shape["N"] * shape["C"] * shape["H"] * shape["W"]


def nbytes_moved(shape, dtype):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    return 2 * nbytes((n, c, h, w), dtype) + nbytes((c, 1, 3, 3), dtype) + nbytes((c,), dtype)


TASK = Task(
    name="depthwise_conv2d",
    category="convolution",
    description="depthwise 3x3 conv2d (groups=C), stride 1, zero padding 1, with bias, on NCHW",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 16, "H": 32, "W": 32}, "small"),
        Shape("awkward", {"N": 1, "C": 37, "H": 29, "W": 45}, "awkward"),
        Shape("large", {"N": 64, "C": 256, "H": 64, "W": 64}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
