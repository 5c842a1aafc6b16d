import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import fan_in_weight, nbytes, randn


def reference(x, weight, bias, groups):
    return torch.nn.functional.conv2d(x, weight, bias, stride=1, padding=1, groups=groups)


def make_inputs(shape, dtype, gen):
    n, c, g, h, w = shape["N"], shape["C"], shape["G"], shape["H"], shape["W"]
    # Each group of channels gets its own offset, so a kernel that mixes groups (or treats the
    # conv as depthwise or dense) is far off.
    grp_off = randn(gen, (1, g, 1, 1, 1), torch.float32, scale=1.0).expand(1, g, c // g, 1, 1).reshape(1, c, 1, 1)
    x = (randn(gen, (n, c, h, w), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=8.0) + grp_off).to(dtype)
    fan_in = (c // g) * 9
    weight = fan_in_weight(gen, (c, c // g, 3, 3), dtype, fan_in)
    bias = randn(gen, (c,), dtype, scale=0.5)
    return (x, weight, bias, g)


def flops(shape):
    n, c, g, h, w = shape["N"], shape["C"], shape["G"], shape["H"], shape["W"]
    return 2.0 * n * c * h * w * (c // g) * 9 + n * c * h * w


def nbytes_moved(shape, dtype):
    n, c, g, h, w = shape["N"], shape["C"], shape["G"], shape["H"], shape["W"]
    return float(2 * nbytes((n, c, h, w), dtype) + nbytes((c, c // g, 3, 3), dtype) + nbytes((c,), dtype))


TASK = Task(
    name="conv2d_grouped",
    category="convolution",
    description="grouped 3x3 conv2d (G groups, C -> C channels, C/G per group), stride 1, zero padding 1, with bias, "
                "NCHW; float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 32, "G": 8, "H": 16, "W": 16}, "small"),
        # 3 channels per group, 5 groups, odd spatial sizes.
        Shape("awkward", {"N": 1, "C": 15, "G": 5, "H": 11, "W": 7}, "awkward"),
        # ResNeXt-50 32x4d stage-1 grouped conv (128 channels, 32 groups of 4, 56 x 56), batch 256:
        # 822 MB of fp32 traffic. The reduction is short (K = 36): default tolerances.
        Shape("large", {"N": 256, "C": 128, "G": 32, "H": 56, "W": 56}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
