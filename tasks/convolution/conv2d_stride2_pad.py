import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import fan_in_weight, randn, total_nbytes

KSIZE, STRIDE, PAD = 7, 2, 3


def out_size(n):
    return (n + 2 * PAD - KSIZE) // STRIDE + 1


def reference(x, weight, bias):
    return torch.nn.functional.conv2d(x, weight, bias, stride=STRIDE, padding=PAD)


def make_inputs(shape, dtype, gen):
    n, ci, co, h, w = shape["N"], shape["Cin"], shape["Cout"], shape["H"], shape["W"]
    # Normalised image-like input (offset 0.4, so the zero padding of the 7x7 window is visible
    # along every border) with a few saturated pixels.
    x = randn(gen, (n, ci, h, w), dtype, scale=1.0, offset=0.4, outliers=1e-3, outlier_scale=5.0)
    fan_in = ci * KSIZE * KSIZE
    weight = fan_in_weight(gen, (co, ci, KSIZE, KSIZE), dtype, fan_in)
    bias = randn(gen, (co,), dtype, scale=0.5)
    return (x, weight, bias)


def flops(shape):
    n, ci, co = shape["N"], shape["Cin"], shape["Cout"]
    outs = n * co * out_size(shape["H"]) * out_size(shape["W"])
    return 2.0 * outs * ci * KSIZE * KSIZE + outs


def nbytes_moved(shape, dtype):
    n, ci, co, h, w = shape["N"], shape["Cin"], shape["Cout"], shape["H"], shape["W"]
    return float(total_nbytes([(n, ci, h, w), (co, ci, KSIZE, KSIZE), (co,), (n, co, out_size(h), out_size(w))], dtype))


TASK = Task(
    name="conv2d_stride2_pad",
    category="convolution",
    description="7x7 conv2d, stride 2, zero padding 3, with bias (the ResNet stem), NCHW; output (H - 1) // 2 + 1 per side; "
                "float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "Cin": 3, "Cout": 16, "H": 32, "W": 32}, "small"),
        # Odd sizes: the last window hangs over the bottom/right padding; H != W.
        Shape("awkward", {"N": 1, "Cin": 3, "Cout": 5, "H": 15, "W": 9}, "awkward"),
        # ResNet-50 stem (3 -> 64 at 224 x 224 -> 112 x 112), batch 128: 488 MB of fp32 traffic.
        # The reduction is short (K = 147): default tolerances.
        Shape("large", {"N": 128, "Cin": 3, "Cout": 64, "H": 224, "W": 224}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
