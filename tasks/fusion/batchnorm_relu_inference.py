import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform

EPS = 1e-5  # torch.nn.BatchNorm2d's default


def reference(x, running_mean, running_var, weight, bias):
    # Inference BatchNorm (running statistics) followed by ReLU. A fused kernel folds the four
    # per-channel vectors into scale = weight / sqrt(var + eps) and shift = bias - mean * scale and
    # computes relu(x * scale + shift); the reference is the unfolded definition in float64.
    f = torch.nn.functional
    return torch.relu(f.batch_norm(x, running_mean, running_var, weight, bias, training=False, eps=EPS))


def make_inputs(shape, dtype, gen):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    mean = randn(gen, (c,), torch.float32, scale=1.0, offset=0.2)
    var = uniform(gen, (c,), torch.float32, 0.25, 4.0)
    # Activations drawn around each channel's running mean with its running variance (as at
    # inference on in-distribution data), slightly shifted per channel so ReLU clamps a different
    # fraction of each channel, plus a few outliers.
    drift = randn(gen, (1, c, 1, 1), torch.float32, scale=0.3)
    z = randn(gen, (n, c, h, w), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=8.0)
    x = mean.view(1, c, 1, 1) + var.sqrt().view(1, c, 1, 1) * (z + drift)
    weight = randn(gen, (c,), torch.float32, scale=0.4, offset=1.0)
    bias = randn(gen, (c,), torch.float32, scale=0.5)
    return tuple(v.to(dtype) for v in (x, mean, var, weight, bias))


def flops(shape):
    return 3.0 * shape["N"] * shape["C"] * shape["H"] * shape["W"]  # multiply, add, max per element


def nbytes_moved(shape, dtype):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    return float(2 * nbytes((n, c, h, w), dtype) + 4 * nbytes((c,), dtype))


TASK = Task(
    name="batchnorm_relu_inference",
    category="fusion",
    description="inference BatchNorm2d (running mean/var, weight, bias, eps=1e-5) + ReLU over NCHW x [N, C, H, W]: y = relu((x - mean) / sqrt(var + eps) * weight + bias)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 4, "C": 64, "H": 16, "W": 16}, "small"),
        # Odd channel count and a 7 x 7 plane (ResNet's last stage); one image.
        Shape("awkward", {"N": 1, "C": 131, "H": 7, "W": 7}, "awkward"),
        # ResNet-50 conv2_x output at batch 128: [128, 256, 56, 56], 392 MiB read + 392 MiB written in float32.
        Shape("large", {"N": 128, "C": 256, "H": 56, "W": 56}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
