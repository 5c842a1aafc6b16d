import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randn


def reference(x):
    # out[n, c, i, j] = x[n, c, i // 2, j // 2]; an integer factor keeps the source index exact
    # (no float scale whose rounding could pick a neighbour).
    return torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest")


def make_inputs(shape, dtype, gen):
    return (randn(gen, (shape["N"], shape["C"], shape["H"], shape["W"]), dtype, scale=2.0, offset=0.5, outliers=1e-3),)


def flops(shape):
    return 0.0


def nbytes_moved(shape, dtype):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    return float(nbytes((n, c, h, w), dtype) + nbytes((n, c, 2 * h, 2 * w), dtype))


TASK = Task(
    name="upsample_nearest2d",
    category="spatial",
    description="2x nearest-neighbour upsampling of NCHW (F.interpolate scale_factor=2, mode='nearest'): "
                "out[..., i, j] = x[..., i // 2, j // 2]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 8, "H": 32, "W": 32}, "small"),
        Shape("awkward", {"N": 1, "C": 13, "H": 23, "W": 1}, "awkward"),
        # FPN top-down pathway (256 channels, 64 x 64 -> 128 x 128), batch 32: 671 MB of fp32 traffic.
        Shape("large", {"N": 32, "C": 256, "H": 64, "W": 64}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # A copy: bit-exact is the only right answer.
    contract=Exact(),
    flops=flops,
    bytes=nbytes_moved,
)
