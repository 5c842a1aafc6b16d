import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32  # opmath for half types
    return x.to(acc).mean(dim=(2, 3)).to(x.dtype)


def make_inputs(shape, dtype, gen):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    # Per-channel offsets (as post-activation feature maps have) so means differ per channel and
    # stay well away from zero relative to their spread.
    ch_off = randn(gen, (1, c, 1, 1), torch.float32, scale=1.0, offset=0.5)
    x = randn(gen, (n, c, h, w), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=10.0) + ch_off
    return (x.to(dtype),)


def flops(shape):
    return float(shape["N"] * shape["C"] * shape["H"] * shape["W"])


def nbytes_moved(shape, dtype):
    n, c = shape["N"], shape["C"]
    return float(nbytes((n, c, shape["H"], shape["W"]), dtype) + nbytes((n, c), dtype))


TASK = Task(
    name="global_avg_pool",
    category="pooling",
    description="global average pooling x.mean(dim=(2, 3)) of NCHW -> [N, C] (accumulated in float32 for half types)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 4, "C": 64, "H": 16, "W": 16}, "small"),
        # Many channels over a 13 x 1 plane, batch 1.
        Shape("awkward", {"N": 1, "C": 1000, "H": 13, "W": 1}, "awkward"),
        # Squeeze of a squeeze-and-excitation block (256 channels at 56 x 56), batch 256: 823 MB fp32.
        Shape("large", {"N": 256, "C": 256, "H": 56, "W": 56}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
