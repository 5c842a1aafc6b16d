import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform

EPS = 1e-5


def reference(x, running_mean, running_var, weight, bias):
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32  # opmath for half types
    scale = torch.rsqrt(running_var.to(acc) + EPS) * weight.to(acc)
    shift = bias.to(acc) - running_mean.to(acc) * scale
    y = x.to(acc) * scale.view(1, -1, 1, 1) + shift.view(1, -1, 1, 1)
    return y.to(x.dtype)


def make_inputs(shape, dtype, gen):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    # Trained statistics that roughly match the data, as at inference: channel means N(0, 2),
    # variances 0.25 .. 4, with the stored statistics off by ~10% (the data is not the train set).
    ch_mean = randn(gen, (c,), torch.float32, scale=2.0)
    ch_var = uniform(gen, (c,), torch.float32, 0.25, 4.0)
    x = randn(gen, (n, c, h, w), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=8.0) * ch_var.sqrt().view(1, c, 1, 1) \
        + ch_mean.view(1, c, 1, 1)
    running_mean = ch_mean + randn(gen, (c,), torch.float32, scale=0.1) * ch_var.sqrt()
    running_var = ch_var * uniform(gen, (c,), torch.float32, 0.8, 1.25)
    weight = randn(gen, (c,), torch.float32, scale=0.25, offset=1.0)
    bias = randn(gen, (c,), torch.float32, scale=0.5)
    return tuple(v.to(dtype) for v in (x, running_mean, running_var, weight, bias))


def flops(shape):
    return 2.0 * shape["N"] * shape["C"] * shape["H"] * shape["W"]  # one multiply-add per element once folded


def nbytes_moved(shape, dtype):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    return float(2 * nbytes((n, c, h, w), dtype) + 4 * nbytes((c,), dtype))


TASK = Task(
    name="batch_norm_inference",
    category="normalization",
    description="BatchNorm2d inference on NCHW: y = (x - running_mean) / sqrt(running_var + 1e-5) * weight + bias",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 4, "C": 32, "H": 16, "W": 16}, "small"),
        # Batch of one, odd channels, a 7 x 1 plane.
        Shape("awkward", {"N": 1, "C": 37, "H": 7, "W": 1}, "awkward"),
        # ResNet-50 layer1 BatchNorm (256 channels at 56 x 56), batch 128: 822 MB of fp32 traffic.
        Shape("large", {"N": 128, "C": 256, "H": 56, "W": 56}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
