import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, nbytes, randn


def reference(x, weight):
    return torch.nn.functional.prelu(x, weight)


def make_inputs(shape, dtype, gen):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    x = randn(gen, (n, c, h, w), dtype, scale=2.0, offset=-0.2, outliers=1e-3)
    # Learned slopes: spread around 0.25 (PyTorch's init) with some negative and some above 1, so
    # a kernel that indexes the slope by the wrong dim (or uses one slope) fails.
    weight = randn(gen, (c,), dtype, scale=0.5, offset=0.25)
    return (x, weight)


def flops(shape):
    return 2.0 * shape["N"] * shape["C"] * shape["H"] * shape["W"]


def nbytes_moved(shape, dtype):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    return float(2 * nbytes((n, c, h, w), dtype) + c * itemsize(dtype))


TASK = Task(
    name="prelu_channel",
    category="activation",
    description="PReLU with a per-channel slope: x if x > 0 else weight[c] * x, x [N, C, H, W] (NCHW), weight [C]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 16, "H": 32, "W": 32}, "small"),
        # Three channels (RGB-like), odd spatial sizes: a channel boundary falls inside a block.
        Shape("awkward", {"N": 1, "C": 3, "H": 65, "W": 97}, "awkward"),
        # ResNet-50 stage-1 activations (256 channels at 56 x 56) for a batch of 128.
        Shape("large", {"N": 128, "C": 256, "H": 56, "W": 56}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
