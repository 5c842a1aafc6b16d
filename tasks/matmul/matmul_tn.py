import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import gemm_flops, gemm_nbytes, gemm_operands

# float32 atol, derived as for tasks/matmul/matmul.py: a float32 accumulation over K terms carries
# an error of order u * sqrt(K) * rms(C) (u = 2^-24) whatever the kernel; at K = 8192 (the large
# shape's K here too) the maximum over 67M outputs reached 0.8-1.04x the default bound
# (1e-5 x rms) on an H100 (cuBLAS with TF32 off, and the Triton matmul), so the default would fail
# correct kernels at random. 5e-5 x rms puts them at ~0.2x the bound, while TF32 products and
# bfloat16 operands (the bf16_compute control) fail by far. rtol stays 1e-4; float16 and bfloat16
# keep their defaults.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(x, dy):
    return torch.matmul(x.transpose(0, 1), dy)


def make_inputs(shape, dtype, gen):
    k, m, n = shape["K"], shape["M"], shape["N"]
    # The weight-gradient pattern dW = X^T dY: K is the token dimension, both operands are stored
    # token-major ([K, M] and [K, N]), so A^T is read with stride M along the reduction.
    return gemm_operands(gen, (k, m), (k, n), dtype)  # (x, dy)


def flops(shape):
    return gemm_flops(shape["M"], shape["N"], shape["K"])


def nbytes_moved(shape, dtype):
    return gemm_nbytes(shape["M"], shape["K"], shape["N"], dtype)


TASK = Task(
    name="matmul_tn",
    category="matmul",
    description="C = A^T @ B with A [K, M] and B [K, N] stored K-major (the weight-gradient X^T dY); float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"K": 128, "M": 96, "N": 160}, "small"),
        # One token (K = 1, an outer product) into odd M and N.
        Shape("awkward", {"K": 1, "M": 257, "N": 300}, "awkward"),
        # Weight gradient of a Llama-2-13B 5120 x 5120 projection over 8192 tokens: 440 MB of fp32 traffic.
        Shape("large", {"K": 8192, "M": 5120, "N": 5120}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
