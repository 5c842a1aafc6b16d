import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

EPS = 1e-6  # the Stable Diffusion VAE's GroupNorm eps (the UNet's is 1e-5)


def reference(x, weight, bias, num_groups):
    f = torch.nn.functional
    return f.silu(f.group_norm(x, num_groups, weight, bias, EPS))


def make_inputs(shape, dtype, gen):
    n, c, h, w, g = shape["N"], shape["C"], shape["H"], shape["W"], shape["G"]
    # Per-channel offsets and scales, so a group mixes distributions and its mean and variance are
    # no channel's; the mean offset (~1 std) keeps a one-pass E[x^2] - E[x]^2 honest but not hopeless.
    ch_off = randn(gen, (1, c, 1, 1), torch.float32, scale=1.0, offset=0.3)
    ch_scale = torch.linspace(0.5, 2.0, c, device=gen.device).view(1, c, 1, 1)
    x = randn(gen, (n, c, h, w), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=10.0) * ch_scale + ch_off
    # Affine parameters spread around 1 and 0 so SiLU sees both its saturated and its curved part.
    weight = randn(gen, (c,), torch.float32, scale=0.5, offset=1.0)
    bias = randn(gen, (c,), torch.float32, scale=0.5, offset=-0.2)
    return (x.to(dtype), weight.to(dtype), bias.to(dtype), g)


def flops(shape):
    # statistics (sum, sum of squares), normalise + affine (4), SiLU (~4)
    return 12.0 * shape["N"] * shape["C"] * shape["H"] * shape["W"]


def nbytes_moved(shape, dtype):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    return float(2 * nbytes((n, c, h, w), dtype) + 2 * nbytes((c,), dtype))


TASK = Task(
    name="groupnorm_silu",
    category="fusion",
    description="diffusion UNet/VAE block prologue: y = silu(group_norm(x, G, weight, bias, eps=1e-6)), x [N, C, H, W] (NCHW), weight/bias [C]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 64, "H": 16, "W": 16, "G": 32}, "small"),
        # One image, 3 channels per group, odd spatial extent: a group of 3 * 7 * 9 = 189 elements.
        Shape("awkward", {"N": 1, "C": 15, "H": 7, "W": 9, "G": 5}, "awkward"),
        # The Stable Diffusion VAE decoder's last up block: 128 channels at 512 x 512, batch 2,
        # GroupNorm(32, 128, eps=1e-6) + SiLU; 256 MiB read and 256 MiB written in float32.
        Shape("large", {"N": 2, "C": 128, "H": 512, "W": 512, "G": 32}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
