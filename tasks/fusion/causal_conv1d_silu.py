import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x, weight, bias):
    # x [B, D, L] (channels first); weight [D, W]; bias [D]. Depthwise and causal:
    # y[b, d, t] = silu(bias[d] + sum_k weight[d, k] * x[b, d, t - (W - 1) + k]), x = 0 for t < 0.
    width = weight.shape[-1]
    y = torch.nn.functional.conv1d(x, weight.unsqueeze(1), bias, padding=width - 1, groups=x.shape[1])
    return torch.nn.functional.silu(y[..., : x.shape[-1]])


def make_inputs(shape, dtype, gen):
    b, d, length, width = shape["batch"], shape["dim"], shape["seq"], shape["width"]
    # The in_proj output: per-channel offsets and scales, a few outliers. Weights and bias of the
    # size Mamba's trained convolutions have; the pre-activation is O(1) with both signs, where
    # SiLU is far from linear.
    chan_off = randn(gen, (1, d, 1), torch.float32, scale=0.3)
    chan_scale = randn(gen, (1, d, 1), torch.float32, scale=0.5).abs() + 0.5
    x = (randn(gen, (b, d, length), torch.float32, outliers=1e-3, outlier_scale=8.0) * chan_scale + chan_off).to(dtype)
    weight = randn(gen, (d, width), dtype, scale=0.4, offset=0.05)
    bias = randn(gen, (d,), dtype, scale=0.3)
    return (x, weight, bias)


def flops(shape):
    b, d, length, width = shape["batch"], shape["dim"], shape["seq"], shape["width"]
    return b * d * length * (2.0 * width + 5.0)  # W multiply-adds, bias, SiLU


def nbytes_moved(shape, dtype):
    b, d, length, width = shape["batch"], shape["dim"], shape["seq"], shape["width"]
    return float(2 * nbytes((b, d, length), dtype) + nbytes((d, width + 1), dtype))


TASK = Task(
    name="causal_conv1d_silu",
    category="fusion",
    description="Mamba's causal_conv1d_fn with SiLU: depthwise causal 1-D convolution of x [B, D, L] with weight [D, W] "
                "and bias [D] (zero history before t = 0), then SiLU; output [B, D, L]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 2, "dim": 64, "seq": 256, "width": 4}, "small"),
        # Odd channel count and length; the window crosses block edges.
        Shape("awkward", {"batch": 3, "dim": 75, "seq": 37, "width": 4}, "awkward"),
        # Shorter than the window: every output sees the zero history.
        Shape("awkward_short", {"batch": 1, "dim": 33, "seq": 2, "width": 4}, "awkward"),
        # Mamba-2.8B: d_inner 5120, width 4, 4 x 4096 tokens.
        Shape("large", {"batch": 4, "dim": 5120, "seq": 4096, "width": 4}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
