"""2-D average pooling, kernel 3, stride 2, padding 1, count_include_pad=False, ceil_mode=False
(F.avg_pool2d): each output is the mean of the input elements its window covers inside the
image; padded positions are neither summed nor counted, so border windows divide by 4 or 6
(corner, edge) instead of 9. Inputs have a large offset (2.0): dividing by 9 at the border, or
summing padded zeros into a mean over the valid count, is far off.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

KERNEL, STRIDE, PADDING = 3, 2, 1


def out_size(n):
    return (n + 2 * PADDING - KERNEL) // STRIDE + 1


def reference(x):
    return torch.nn.functional.avg_pool2d(x, KERNEL, STRIDE, PADDING, ceil_mode=False, count_include_pad=False)


def make_inputs(shape, dtype, gen):
    return (randn(gen, (shape["N"], shape["C"], shape["H"], shape["W"]), dtype, scale=1.0, offset=2.0, outliers=1e-3),)


def flops(shape):
    # 9 additions and a division per output window
    return 10.0 * shape["N"] * shape["C"] * out_size(shape["H"]) * out_size(shape["W"])


def nbytes_moved(shape, dtype):
    n, c = shape["N"], shape["C"]
    return float(nbytes((n, c, shape["H"], shape["W"]), dtype) + nbytes((n, c, out_size(shape["H"]), out_size(shape["W"])), dtype))


TASK = Task(
    name="avg_pool2d",
    category="pooling",
    description="2-D average pooling, kernel 3, stride 2, padding 1, count_include_pad=False (border windows divide by the "
                "number of in-image elements), on NCHW",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 16, "H": 32, "W": 32}, "small"),
        # Odd sizes (the last window's bottom/right tap is in the image), W = 2.
        Shape("awkward", {"N": 1, "C": 19, "H": 33, "W": 2}, "awkward"),
        # 128 channels at 112 x 112, batch 64: 514 MB of fp32 traffic.
        Shape("large", {"N": 64, "C": 128, "H": 112, "W": 112}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
