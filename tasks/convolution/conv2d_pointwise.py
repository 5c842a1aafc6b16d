import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import fan_in_weight, randn, total_nbytes


def reference(x, weight, bias):
    return torch.nn.functional.conv2d(x, weight, bias)


def make_inputs(shape, dtype, gen):
    n, ci, co, h, w = shape["N"], shape["Cin"], shape["Cout"], shape["H"], shape["W"]
    # Post-ReLU-like activations are non-negative; a shifted, outlier-laden input keeps signs
    # mixed while the mean is clearly nonzero.
    x = randn(gen, (n, ci, h, w), dtype, scale=1.0, offset=0.5, outliers=1e-3, outlier_scale=8.0)
    weight = fan_in_weight(gen, (co, ci, 1, 1), dtype, ci, offset=-0.1)
    bias = randn(gen, (co,), dtype, scale=0.5)
    return (x, weight, bias)


def flops(shape):
    n, ci, co, h, w = shape["N"], shape["Cin"], shape["Cout"], shape["H"], shape["W"]
    return 2.0 * n * co * h * w * ci + n * co * h * w


def nbytes_moved(shape, dtype):
    n, ci, co, h, w = shape["N"], shape["Cin"], shape["Cout"], shape["H"], shape["W"]
    return float(total_nbytes([(n, ci, h, w), (co, ci), (co,), (n, co, h, w)], dtype))


TASK = Task(
    name="conv2d_pointwise",
    category="convolution",
    description="1x1 conv2d with bias on NCHW (a per-pixel GEMM over channels): x [N, Cin, H, W], weight [Cout, Cin, 1, 1]; "
                "float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "Cin": 32, "Cout": 48, "H": 16, "W": 16}, "small"),
        # Odd channel counts and a 13 x 1 image (the pixel dimension is not a multiple of any tile).
        Shape("awkward", {"N": 3, "Cin": 5, "Cout": 7, "H": 13, "W": 1}, "awkward"),
        # ResNet-50 layer1 bottleneck reduce (1x1, 256 -> 64 at 56 x 56), batch 128: 514 MB fp32.
        # The reduction is short (K = 256): default tolerances.
        Shape("large", {"N": 128, "Cin": 256, "Cout": 64, "H": 56, "W": 56}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
