import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import gemm_flops, gemm_nbytes, randn

# float32 atol, derived as for tasks/matmul/matmul.py: a float32 accumulation over K terms carries
# an error of order u * sqrt(K) * rms(C) (u = 2^-24) whatever the kernel; at K = 8192 the maximum
# over 67M outputs reached 0.8-1.04x the default bound (1e-5 x rms) on an H100 (cuBLAS with TF32
# off, and the Triton matmul). The large shape here has K = 4096 and 67M outputs, only sqrt(2)
# less, so the default would fail correct kernels at random; 5e-5 x rms leaves room while TF32
# products and bfloat16 operands (the bf16_compute control) fail by far. rtol stays 1e-4; float16
# and bfloat16 keep their defaults.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(x, w):
    return torch.matmul(x, w.transpose(0, 1))


def make_inputs(shape, dtype, gen):
    m, k, n = shape["M"], shape["K"], shape["N"]
    # Activations with a small mean and outliers; a weight matrix at 1/sqrt(K) init scale, stored
    # [N, K] (row-major, as nn.Linear stores it): B^T is read along K with unit stride.
    x = randn(gen, (m, k), dtype, scale=1.0, offset=0.05, outliers=1e-3, outlier_scale=8.0)
    w = randn(gen, (n, k), dtype, scale=k ** -0.5, offset=-0.1 * k ** -0.5, outliers=1e-3, outlier_scale=8.0)
    return (x, w)


def flops(shape):
    return gemm_flops(shape["M"], shape["N"], shape["K"])


def nbytes_moved(shape, dtype):
    return gemm_nbytes(shape["M"], shape["K"], shape["N"], dtype)  # B is [N, K]: the same count


TASK = Task(
    name="matmul_nt",
    category="matmul",
    description="C = A @ B^T with A [M, K] and B [N, K] (the nn.Linear layout, B not transposed in memory); float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 128, "K": 96, "N": 160}, "small"),
        # M = 1 (a decode step) with K and N that are not multiples of any tile size.
        Shape("awkward", {"M": 1, "K": 257, "N": 300}, "awkward"),
        # Llama-3-8B q_proj (4096 -> 4096) over 16384 tokens: 604 MB of fp32 traffic.
        Shape("large", {"M": 16384, "K": 4096, "N": 4096}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
