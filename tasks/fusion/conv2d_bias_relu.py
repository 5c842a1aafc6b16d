import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import itemsize, randn

# float32 atol, derived: each output is a dot product of K = 9 * C_in terms (576 for the large
# shape). Direct or implicit-GEMM convolution accumulates an error of order u * sqrt(K) * rms(y)
# (u = 2^-24), about 0.3x the default bound (1e-5 x rms) at K = 576, scaling the matmul task's
# H100 measurement (0.8-1.04x the bound at K = 8192) by sqrt(576 / 8192). But with TF32 off cuDNN
# may still pick a Winograd or FFT algorithm for a 3x3 float32 convolution, whose transforms
# amplify rounding error (more so the larger the output tile; not measured here), and an implicit
# GEMM may split K. 5e-5 x rms (as for the float32 GEMM tasks) leaves that room, while
# operands rounded to bfloat16 overshoot it by far: on CPU at [2, 64, 32, 32] (K = 576) the float32
# reference reached max |err| = 2e-6 x rms and the bf16-rounded computation 1.5e-2 x rms, 300x
# the bound (the bf16_compute control is rejected); TF32 products (3 more mantissa bits) would land ~40x over.
# float16 and bfloat16 keep their defaults. rtol stays 1e-4.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(x, weight, bias):
    f = torch.nn.functional
    return torch.relu(f.conv2d(x, weight, bias, stride=1, padding=1))


def make_inputs(shape, dtype, gen):
    n, ci, co, h, w = shape["N"], shape["C_in"], shape["C_out"], shape["H"], shape["W"]
    # Post-ReLU-like activations are non-negative in real nets, but a first layer (or a layer after
    # a norm) sees signed inputs; signed with an offset and outliers keeps cancellation in the sums.
    x = randn(gen, (n, ci, h, w), dtype, scale=1.0, offset=0.2, outliers=1e-3, outlier_scale=8.0)
    # Kaiming-like scale 1/sqrt(9 C_in): outputs are O(1), and the bias (also O(1)) shifts the
    # ReLU threshold per output channel, so about half the outputs are clamped.
    k = 9 * ci
    weight = randn(gen, (co, ci, 3, 3), dtype, scale=k ** -0.5, offset=-0.02 * k ** -0.5)
    bias = randn(gen, (co,), dtype, scale=0.5)
    return (x, weight, bias)


def flops(shape):
    n, ci, co, h, w = shape["N"], shape["C_in"], shape["C_out"], shape["H"], shape["W"]
    return 2.0 * n * co * h * w * 9 * ci + 2.0 * n * co * h * w  # MACs, then bias add and max(0, .)


def nbytes_moved(shape, dtype):
    n, ci, co, h, w = shape["N"], shape["C_in"], shape["C_out"], shape["H"], shape["W"]
    return float((n * ci * h * w + co * ci * 9 + co + n * co * h * w) * itemsize(dtype))


TASK = Task(
    name="conv2d_bias_relu",
    category="fusion",
    description="y = relu(conv2d(x, W, b, stride 1, padding 1)), x [N, C_in, H, W] NCHW, W [C_out, C_in, 3, 3], b [C_out]: a 3x3 convolution with a bias + ReLU epilogue; float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C_in": 16, "C_out": 32, "H": 16, "W": 16}, "small"),
        # One image, 3 input channels (an RGB stem), an odd number of output channels and an odd
        # plane: padding on every border, tiles that do not divide anything.
        Shape("awkward", {"N": 1, "C_in": 3, "C_out": 13, "H": 17, "W": 11}, "awkward"),
        # VGG-16 conv1_2 at batch 32: [32, 64, 224, 224] -> [32, 64, 224, 224], 392 MiB in and out.
        Shape("large", {"N": 32, "C_in": 64, "C_out": 64, "H": 224, "W": 224}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
