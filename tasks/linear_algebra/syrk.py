"""BLAS syrk (lower, no transpose), out of place: out = tril(alpha A A^T + beta C) + triu(C, 1).

A [N, K], C [N, N]. As in BLAS, only the lower triangle (diagonal included) of C is updated; the
strict upper triangle of C is neither used nor changed and is returned as it is (out of place,
so it is copied). float32 means IEEE float32 (no TF32); the 16-bit dtype accumulates in float32.
"""

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import itemsize, randn

# float32 atol, derived as for tasks/matmul/matmul.py: the K-term float32 dot products carry an
# error of order u sqrt(K) rms (u = 2^-24) whatever the kernel; at K = 8192 cuBLAS reached
# 0.8-1.04x the default bound (1e-5 x rms) on the matmul task, so 5e-5 x rms is used, which
# bfloat16 operands still overshoot by two orders of magnitude. rtol stays 1e-4.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(a, c, alpha, beta):
    full = alpha * (a @ a.T) + beta * c
    return full.tril() + c.triu(1)


def make_inputs(shape, dtype, gen):
    n, k = shape["N"], shape["K"]
    a = randn(gen, (n, k), dtype, scale=k ** -0.5, offset=0.05 * k ** -0.5, outliers=1e-3, outlier_scale=8.0)
    c = randn(gen, (n, n), dtype, scale=1.0, offset=0.1)
    return (a, c, 0.9, -0.6)


def flops(shape):
    n, k = shape["N"], shape["K"]
    return float(n * (n + 1) * k + 3 * n * (n + 1) // 2)  # the lower triangle's dot products and scaling


def nbytes_moved(shape, dtype):
    n, k = shape["N"], shape["K"]
    # A read once, C read and the output written in full (the upper triangle is copied)
    return float((n * k + 2 * n * n) * itemsize(dtype))


TASK = Task(
    name="syrk",
    category="linear_algebra",
    description="BLAS syrk lower: out = tril(alpha A A^T + beta C) + triu(C, 1), A [N, K], C [N, N] (alpha 0.9, beta -0.6); "
                "float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 128, "K": 96}, "small"),
        Shape("awkward", {"N": 67, "K": 1001}, "awkward"),
        # A 256 MiB, C 256 MiB read and 256 MiB written in float32; 1.1 TFLOP.
        Shape("large", {"N": 8192, "K": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
