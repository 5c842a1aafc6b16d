import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

EPS = 1e-5


def reference(x, weight, bias):
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32  # opmath for half types
    xf = x.to(acc)
    mean = xf.mean((2, 3), keepdim=True)
    centred = xf - mean
    var = centred.square().mean((2, 3), keepdim=True)  # biased
    y = centred * torch.rsqrt(var + EPS) * weight.to(acc).view(1, -1, 1, 1) + bias.to(acc).view(1, -1, 1, 1)
    return y.to(x.dtype)


def make_inputs(shape, dtype, gen):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    # Every (sample, channel) plane has its own offset and scale, so statistics must be taken per
    # instance: per-channel (batch norm) or per-sample (layer norm) statistics are far off.
    off = randn(gen, (n, c, 1, 1), torch.float32, scale=2.0)
    sc = randn(gen, (n, c, 1, 1), torch.float32, scale=0.5, offset=1.0).abs() + 0.25
    x = randn(gen, (n, c, h, w), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=8.0) * sc + off
    weight = randn(gen, (c,), torch.float32, scale=0.25, offset=1.0)
    bias = randn(gen, (c,), torch.float32, scale=0.5)
    return (x.to(dtype), weight.to(dtype), bias.to(dtype))


def flops(shape):
    return 7.0 * shape["N"] * shape["C"] * shape["H"] * shape["W"]


def nbytes_moved(shape, dtype):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    return float(2 * nbytes((n, c, h, w), dtype) + 2 * nbytes((c,), dtype))


TASK = Task(
    name="instance_norm",
    category="normalization",
    description="F.instance_norm with affine weight and bias on NCHW: per-(sample, channel) mean and biased variance over "
                "H x W, eps 1e-5, no running statistics",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 4, "C": 16, "H": 16, "W": 16}, "small"),
        # Odd plane sizes with W = 1 (a 13-element plane) and an odd channel count.
        Shape("awkward", {"N": 3, "C": 7, "H": 13, "W": 1}, "awkward"),
        # Fast neural style transfer (Johnson et al.), 128 channels at 256 x 256, batch 8: 537 MB fp32.
        Shape("large", {"N": 8, "C": 128, "H": 256, "W": 256}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
