import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import fan_in_weight, randn, total_nbytes

KSIZE, PAD = 3, 1


def reference(x, weight, bias):
    return torch.nn.functional.conv1d(x, weight, bias, stride=1, padding=PAD)


def make_inputs(shape, dtype, gen):
    n, ci, co, length = shape["N"], shape["Cin"], shape["Cout"], shape["L"]
    # Log-mel-like input: per-channel offsets (a spectral envelope) plus noise with outliers.
    env = randn(gen, (1, ci, 1), torch.float32, scale=1.0, offset=-0.5)
    x = (randn(gen, (n, ci, length), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=8.0) + env).to(dtype)
    fan_in = ci * KSIZE
    weight = fan_in_weight(gen, (co, ci, KSIZE), dtype, fan_in)
    bias = randn(gen, (co,), dtype, scale=0.5)
    return (x, weight, bias)


def flops(shape):
    n, ci, co, length = shape["N"], shape["Cin"], shape["Cout"], shape["L"]
    return 2.0 * n * co * length * ci * KSIZE + n * co * length


def nbytes_moved(shape, dtype):
    n, ci, co, length = shape["N"], shape["Cin"], shape["Cout"], shape["L"]
    return float(total_nbytes([(n, ci, length), (co, ci, KSIZE), (co,), (n, co, length)], dtype))


TASK = Task(
    name="conv1d",
    category="convolution",
    description="conv1d, kernel 3, stride 1, zero padding 1, with bias: x [N, Cin, L], weight [Cout, Cin, 3]; "
                "float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "Cin": 16, "Cout": 32, "L": 128}, "small"),
        Shape("awkward", {"N": 3, "Cin": 5, "Cout": 7, "L": 37}, "awkward"),
        # Whisper-small encoder conv1 (80 mel bins -> 768, 3000 frames of a 30 s window), batch 64:
        # 651 MB of fp32 traffic. The reduction is short (K = 240): default tolerances.
        Shape("large", {"N": 64, "Cin": 80, "Cout": 768, "L": 3000}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
