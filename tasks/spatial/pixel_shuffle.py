import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randn


def reference(x, r):
    # out[n, c, h*r + i, w*r + j] = x[n, c*r*r + i*r + j, h, w]
    return torch.nn.functional.pixel_shuffle(x, r)


def make_inputs(shape, dtype, gen):
    r = shape["r"]
    x = randn(gen, (shape["N"], shape["C"] * r * r, shape["H"], shape["W"]), dtype, scale=2.0, offset=0.5, outliers=1e-3)
    return (x, r)


def flops(shape):
    return 0.0


def nbytes_moved(shape, dtype):
    r = shape["r"]
    return float(2 * nbytes((shape["N"], shape["C"] * r * r, shape["H"], shape["W"]), dtype))


TASK = Task(
    name="pixel_shuffle",
    category="spatial",
    description="F.pixel_shuffle(x, r): [N, C r^2, H, W] -> [N, C, H r, W r], "
                "out[n, c, h r + i, w r + j] = x[n, c r^2 + i r + j, h, w] (r = 2 or 3)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 16, "H": 16, "W": 16, "r": 2}, "small"),
        # Upscale factor 3 (ESPCN x3), odd sizes.
        Shape("awkward", {"N": 1, "C": 3, "H": 7, "W": 13, "r": 3}, "awkward"),
        # EDSR / ESRGAN x2 upsampler (256 -> 64 channels at 128 x 128 -> 256 x 256), batch 16: 537 MB fp32.
        Shape("large", {"N": 16, "C": 64, "H": 128, "W": 128, "r": 2}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Exact(),
    flops=flops,
    bytes=nbytes_moved,
)
