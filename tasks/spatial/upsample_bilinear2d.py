import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    return torch.nn.functional.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)


def make_inputs(shape, dtype, gen):
    return (randn(gen, (shape["N"], shape["C"], shape["H"], shape["W"]), dtype, scale=2.0, offset=0.5, outliers=1e-3),)


def flops(shape):
    # two lerps along W and one along H: 3 x (sub, mul, add) per output
    return 9.0 * shape["N"] * shape["C"] * (2 * shape["H"]) * (2 * shape["W"])


def nbytes_moved(shape, dtype):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    return nbytes((n, c, h, w), dtype) + nbytes((n, c, 2 * h, 2 * w), dtype)


TASK = Task(
    name="upsample_bilinear2d",
    category="spatial",
    description="2x bilinear upsampling of NCHW (F.interpolate, scale_factor=2, align_corners=False)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 8, "H": 32, "W": 32}, "small"),
        Shape("awkward", {"N": 1, "C": 13, "H": 23, "W": 45}, "awkward"),
        Shape("large", {"N": 32, "C": 64, "H": 128, "W": 128}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
