import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import gemm_flops, gemm_nbytes, gemm_operands

# float32 atol, derived as for tasks/matmul/matmul.py: a float32 accumulation over K terms carries
# an error of order u * sqrt(K) * rms(C) (u = 2^-24) however good the kernel is; at K = 8192 the
# maximum over 67M outputs measured 0.8-1.04x the default bound (1e-5 x rms) for cuBLAS and the
# Triton matmul. The large shape here has K = 4096 and 67M outputs as well (only sqrt(2) less), so
# the default would fail correct kernels at random; 5e-5 x rms leaves room while TF32 products
# (10-bit mantissa) and bfloat16 operands (the bf16_compute control) still fail by far. rtol stays
# 1e-4; float16 and bfloat16 keep their defaults.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(a, b):
    return torch.bmm(a, b)


def make_inputs(shape, dtype, gen):
    bs, m, k, n = shape["B"], shape["M"], shape["K"], shape["N"]
    # Near-zero-mean operands with a few outliers: products cancel, so atol (x rms) and rtol both
    # matter; every batch has its own operands (a kernel that reuses batch 0 fails).
    return gemm_operands(gen, (bs, m, k), (bs, k, n), dtype)


def flops(shape):
    return gemm_flops(shape["M"], shape["N"], shape["K"], batch=shape["B"])


def nbytes_moved(shape, dtype):
    return gemm_nbytes(shape["M"], shape["K"], shape["N"], dtype, batch=shape["B"])


TASK = Task(
    name="bmm",
    category="matmul",
    description="batched matrix product C[b] = A[b] @ B[b], A [B, M, K], B [B, K, N]; float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"B": 4, "M": 64, "K": 96, "N": 80}, "small"),
        # M = 1 per batch (batched matrix-vector products), K and N not multiples of any tile.
        Shape("awkward", {"B": 7, "M": 1, "K": 129, "N": 77}, "awkward"),
        # 16 independent 2048 x 4096 x 2048 products (K = 4096, 67M outputs): 1.34 GB of fp32 traffic.
        Shape("large", {"B": 16, "M": 2048, "K": 4096, "N": 2048}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
