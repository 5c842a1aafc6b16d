import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import fan_in_weight, randn, total_nbytes

# float32 atol, derived as for tasks/matmul/matmul.py: each output is a float32 sum of
# K = 9 Cin products, whose rounding error grows like u * sqrt(K) * rms (u = 2^-24) whatever the
# kernel (direct, implicit GEMM or im2col); at K = 8192 the worst of 67M GEMM outputs reached
# 0.8-1.04x the default bound (1e-5 x rms) on an H100, so at the large shape's K = 1152 (2.7x
# less) and 103M outputs the default leaves a correct kernel little room (more so for
# transform-based algorithms, which add rounding of their own). 5e-5 x rms does, while TF32
# products and bfloat16 operands (the bf16_compute control, ~2e-3 x rms) still fail by far. rtol
# stays 1e-4; bfloat16 keeps its default.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(x, weight, bias):
    return torch.nn.functional.conv2d(x, weight, bias, stride=1, padding=1)


def make_inputs(shape, dtype, gen):
    n, ci, co, h, w = shape["N"], shape["Cin"], shape["Cout"], shape["H"], shape["W"]
    # Activations with an offset (so zero padding at the border is visible) and outliers;
    # weights at 1/sqrt(fan_in) scale keep outputs O(1).
    x = randn(gen, (n, ci, h, w), dtype, scale=1.0, offset=0.25, outliers=1e-3, outlier_scale=8.0)
    fan_in = ci * 9
    weight = fan_in_weight(gen, (co, ci, 3, 3), dtype, fan_in)
    bias = randn(gen, (co,), dtype, scale=0.5)
    return (x, weight, bias)


def flops(shape):
    n, ci, co, h, w = shape["N"], shape["Cin"], shape["Cout"], shape["H"], shape["W"]
    return 2.0 * n * co * h * w * ci * 9 + n * co * h * w


def nbytes_moved(shape, dtype):
    n, ci, co, h, w = shape["N"], shape["Cin"], shape["Cout"], shape["H"], shape["W"]
    return float(total_nbytes([(n, ci, h, w), (co, ci, 3, 3), (co,), (n, co, h, w)], dtype))


TASK = Task(
    name="conv2d_3x3",
    category="convolution",
    description="dense 3x3 conv2d, stride 1, zero padding 1, with bias, NCHW x [N, Cin, H, W], weight [Cout, Cin, 3, 3]; "
                "float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "Cin": 16, "Cout": 32, "H": 16, "W": 16}, "small"),
        # RGB input (Cin = 3), odd output channels, odd and unequal spatial sizes.
        Shape("awkward", {"N": 1, "Cin": 3, "Cout": 7, "H": 17, "W": 9}, "awkward"),
        # VGG-16 conv2_2 (128 -> 128 at 112 x 112), batch 64: 822 MB of fp32 traffic.
        Shape("large", {"N": 64, "Cin": 128, "Cout": 128, "H": 112, "W": 112}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
