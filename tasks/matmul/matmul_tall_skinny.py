import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import gemm_flops, gemm_nbytes, randn


def reference(a, b):
    return torch.matmul(a, b)


def make_inputs(shape, dtype, gen):
    m, k, n = shape["M"], shape["K"], shape["N"]
    # A tall block of vectors (rows) times a small basis: the kernel is bound by reading A once;
    # K is short, so the default float32 tolerance covers the accumulation (u * sqrt(128) << 1e-5).
    a = randn(gen, (m, k), dtype, scale=1.0, offset=0.1, outliers=1e-3, outlier_scale=8.0)
    b = randn(gen, (k, n), dtype, scale=k ** -0.5, offset=-0.05 * k ** -0.5, outliers=1e-3, outlier_scale=8.0)
    return (a, b)


def flops(shape):
    return gemm_flops(shape["M"], shape["N"], shape["K"])


def nbytes_moved(shape, dtype):
    return gemm_nbytes(shape["M"], shape["K"], shape["N"], dtype)


TASK = Task(
    name="matmul_tall_skinny",
    category="matmul",
    description="tall-skinny C = A @ B, A [M, K] with M >> K, B [K, N] small (a block of vectors projected onto a basis; "
                "memory-bound); float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 4096, "K": 64, "N": 16}, "small"),
        # M prime, K and N odd and below any tile (N = 7 columns).
        Shape("awkward", {"M": 10007, "K": 33, "N": 7}, "awkward"),
        # 2^20 rows of 128 features projected to 32: A is 537 MB in fp32.
        Shape("large", {"M": 1048576, "K": 128, "N": 32}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
