import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

EPS = 1e-5


def reference(x, weight, bias, num_groups):
    return torch.nn.functional.group_norm(x, num_groups, weight, bias, EPS)


def make_inputs(shape, dtype, gen):
    n, c, h, w, g = shape["N"], shape["C"], shape["H"], shape["W"], shape["G"]
    # Per-channel offsets (N(0, 1)) and scales (0.5 .. 1.5) so a group is not one distribution
    # and its statistics differ from every channel's; offsets stay modest (no catastrophic
    # cancellation beyond what the default tolerance covers).
    ch_off = randn(gen, (1, c, 1, 1), torch.float32, scale=1.0)
    ch_scale = torch.linspace(0.5, 1.5, c, device=gen.device).view(1, c, 1, 1)
    x = randn(gen, (n, c, h, w), torch.float32, scale=1.0) * ch_scale + ch_off
    weight = randn(gen, (c,), torch.float32, scale=0.25, offset=1.0)
    bias = randn(gen, (c,), torch.float32, scale=0.5)
    return (x.to(dtype), weight.to(dtype), bias.to(dtype), g)


def flops(shape):
    return 8.0 * shape["N"] * shape["C"] * shape["H"] * shape["W"]


def nbytes_moved(shape, dtype):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    return float(2 * nbytes((n, c, h, w), dtype) + 2 * nbytes((c,), dtype))


TASK = Task(
    name="group_norm",
    category="normalization",
    description="F.group_norm of [N, C, H, W] with G groups, per-channel weight and bias, eps=1e-5",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 4, "C": 32, "H": 16, "W": 16, "G": 8}, "small"),
        # Odd channels per group (3), W = 1, a group of 3 * 13 = 39 elements.
        Shape("awkward", {"N": 3, "C": 15, "H": 13, "W": 1, "G": 5}, "awkward"),
        Shape("large", {"N": 32, "C": 256, "H": 128, "W": 128, "G": 32}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
