"""BatchNorm2d forward in training mode: normalise with the batch statistics and update the
running statistics (torch.nn.functional.batch_norm(training=True) semantics).

Contract, written out:
  * inputs: x [N, C, H, W], weight [C], bias [C], running_mean [C], running_var [C] (all in the
    task dtype); momentum 0.1, eps 1e-5 (constants)
  * per channel over n = N H W elements: mean, biased variance var (divide by n)
  * y = (x - mean) / sqrt(var + eps) * weight + bias
  * running_mean' = 0.9 running_mean + 0.1 mean; running_var' = 0.9 running_var + 0.1 var n / (n - 1)
    (the running variance takes the UNBIASED estimate, as PyTorch does)
  * outputs: (y, running_mean', running_var'), new tensors (inputs unchanged), each allclose to the
    float64 reference at the task dtype's default tolerance
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform

MOMENTUM, EPS = 0.1, 1e-5


def reference(x, weight, bias, running_mean, running_var):
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32  # opmath for half types
    xf = x.to(acc)
    n = x.numel() // x.shape[1]
    dims = (0, 2, 3)
    mean = xf.mean(dims)
    centred = xf - mean.view(1, -1, 1, 1)
    var = centred.square().mean(dims)
    scale = torch.rsqrt(var + EPS) * weight.to(acc)
    y = centred * scale.view(1, -1, 1, 1) + bias.to(acc).view(1, -1, 1, 1)
    rm = (1 - MOMENTUM) * running_mean.to(acc) + MOMENTUM * mean
    rv = (1 - MOMENTUM) * running_var.to(acc) + MOMENTUM * var * (n / (n - 1))
    return y.to(x.dtype), rm.to(running_mean.dtype), rv.to(running_var.dtype)


def make_inputs(shape, dtype, gen):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    # Channels with their own offsets (N(0, 2)) and scales (0.5 .. 2): statistics differ per
    # channel, and a kernel that reduces over the wrong axes is far off.
    ch_off = randn(gen, (1, c, 1, 1), torch.float32, scale=2.0)
    ch_scale = torch.linspace(0.5, 2.0, c, device=gen.device).view(1, c, 1, 1)
    x = randn(gen, (n, c, h, w), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=8.0) * ch_scale + ch_off
    weight = randn(gen, (c,), torch.float32, scale=0.25, offset=1.0)
    bias = randn(gen, (c,), torch.float32, scale=0.5)
    running_mean = randn(gen, (c,), torch.float32, scale=1.0)
    running_var = uniform(gen, (c,), torch.float32, 0.5, 3.0)
    return tuple(v.to(dtype) for v in (x, weight, bias, running_mean, running_var))


def flops(shape):
    # mean, centred square, normalise, scale and shift per element; the running updates per channel
    return 7.0 * shape["N"] * shape["C"] * shape["H"] * shape["W"] + 6.0 * shape["C"]


def nbytes_moved(shape, dtype):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    return float(2 * nbytes((n, c, h, w), dtype) + 6 * nbytes((c,), dtype))


TASK = Task(
    name="batch_norm_train",
    category="normalization",
    description="BatchNorm2d training forward on NCHW: batch statistics (biased var) normalise x; returns y and the running "
                "mean/var updated with momentum 0.1 (unbiased var), eps 1e-5",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 8, "C": 16, "H": 8, "W": 8}, "small"),
        # Batch of one, odd channel count and spatial sizes (63 elements per channel).
        Shape("awkward", {"N": 1, "C": 37, "H": 9, "W": 7}, "awkward"),
        # ResNet-50 layer1 BatchNorm (256 channels at 56 x 56) at batch 128: 822 MB of fp32 traffic.
        Shape("large", {"N": 128, "C": 256, "H": 56, "W": 56}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
