"""F.adaptive_avg_pool2d(x, (7, 7)): output cell (i, j) averages rows
[floor(i H / 7), ceil((i + 1) H / 7)) and columns [floor(j W / 7), ceil((j + 1) W / 7)).
When 7 does not divide H (or W), windows differ in size and neighbouring windows overlap by a
row or column; every input size here is chosen so they do.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

OUT = 7


def reference(x):
    return torch.nn.functional.adaptive_avg_pool2d(x, (OUT, OUT))


def make_inputs(shape, dtype, gen):
    return (randn(gen, (shape["N"], shape["C"], shape["H"], shape["W"]), dtype, scale=1.0, offset=0.5, outliers=1e-3),)


def flops(shape):
    # each output sums its window (about (H/7 + 1)(W/7 + 1) elements) and divides once
    h, w = shape["H"], shape["W"]
    return float(shape["N"] * shape["C"] * OUT * OUT * ((h // OUT + 1) * (w // OUT + 1) + 1))


def nbytes_moved(shape, dtype):
    n, c = shape["N"], shape["C"]
    return float(nbytes((n, c, shape["H"], shape["W"]), dtype) + nbytes((n, c, OUT, OUT), dtype))


TASK = Task(
    name="adaptive_avg_pool2d",
    category="pooling",
    description="F.adaptive_avg_pool2d to 7 x 7 on NCHW with H, W not multiples of 7 (windows of unequal size that overlap)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 16, "H": 20, "W": 20}, "small"),
        # H < 2 * 7 (windows of 1-3 rows, most overlapping), W odd.
        Shape("awkward", {"N": 1, "C": 13, "H": 9, "W": 17}, "awkward"),
        # Detection backbone output at stride 32 of 640 px (20 x 20, 512 channels) pooled to 7 x 7,
        # batch 512: 470 MB of fp32 traffic.
        Shape("large", {"N": 512, "C": 512, "H": 20, "W": 20}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
