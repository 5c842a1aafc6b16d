import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import gemm_flops, gemm_nbytes, gemm_operands

# float32 atol, derived: a float32 accumulation over K terms carries an error that grows like
# u * sqrt(K) * rms(C) (u = 2^-24), independent of how good the kernel is. At K = 8192, measured on
# an H100 over 4 seeds, cuBLAS (TF32 off) and the Triton reference kernel both reach max |err| =
# 2.8-3.1e-5 x rms among the 67M outputs, 0.8-1.04x the default bound (1e-5 x rms): a correct kernel
# would fail at random. 5e-5 x rms puts them at 0.2x the bound, while TF32 products
# (10-bit mantissa) still fail by 30-40x and bfloat16 operands by 250x or more; rtol stays 1e-4.
# float16 and bfloat16 keep their defaults.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(a, b):
    return torch.matmul(a, b)


def make_inputs(shape, dtype, gen):
    m, k, n = shape["M"], shape["K"], shape["N"]
    # Near-zero-mean operands with a few outliers: products cancel, so atol (x rms) and rtol both matter.
    return gemm_operands(gen, (m, k), (k, n), dtype)


def flops(shape):
    return gemm_flops(shape["M"], shape["N"], shape["K"])


def nbytes_moved(shape, dtype):
    return gemm_nbytes(shape["M"], shape["K"], shape["N"], dtype)


TASK = Task(
    name="matmul",
    category="matmul",
    description="dense matrix product C = A @ B with A [M, K], B [K, N]; float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 128, "K": 96, "N": 160}, "small"),
        # M = 1 (a matrix-vector product) with K and N that are not multiples of any tile size.
        Shape("awkward", {"M": 1, "K": 257, "N": 300}, "awkward"),
        Shape("large", {"M": 8192, "K": 8192, "N": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
