"""BLAS gemv: y_out = alpha * A x + beta * y, A [M, N] row-major, x [N], y [M]; float32 means
IEEE float32 (no TF32), accumulation in float32 for the 16-bit dtype."""

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import itemsize, randn

# float32 atol, derived as for tasks/matmul/matmul.py: a float32 dot product of N terms carries
# an error of order u sqrt(N) rms(A x) however it is ordered (u = 2^-24); at the large shape's
# N = 16384 that is ~1.5x the error at the matmul task's K = 8192, where cuBLAS already reached
# 0.8-1.04x the default bound (1e-5 x rms). 5e-5 x rms leaves room for any reduction order while
# bfloat16 operands (2^-9 relative per term) overshoot it by ~50x on the small shapes; rtol stays
# 1e-4, bfloat16 keeps its defaults.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(a, x, y, alpha, beta):
    return alpha * (a @ x) + beta * y


def make_inputs(shape, dtype, gen):
    m, n = shape["M"], shape["N"]
    a = randn(gen, (m, n), dtype, scale=n ** -0.5, offset=0.02 * n ** -0.5, outliers=1e-3, outlier_scale=8.0)
    x = randn(gen, (n,), dtype, scale=1.0, offset=0.1, outliers=1e-3, outlier_scale=8.0)
    y = randn(gen, (m,), dtype, scale=1.0, offset=-0.2)
    return (a, x, y, 1.5, -0.75)


def flops(shape):
    return 2.0 * shape["M"] * shape["N"] + 3.0 * shape["M"]


def nbytes_moved(shape, dtype):
    m, n = shape["M"], shape["N"]
    return float((m * n + n + 2 * m) * itemsize(dtype))


TASK = Task(
    name="gemv",
    category="linear_algebra",
    description="BLAS gemv y_out = alpha A x + beta y with A [M, N], x [N], y [M] (alpha 1.5, beta -0.75); float32 means "
                "IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 256, "N": 512}, "small"),
        # a few long dot products of odd length with a masked tail (M = 1 would leave a single
        # output value, which a constant passes)
        Shape("awkward", {"M": 7, "N": 4099}, "awkward"),
        # A is 8192 x 16384 x 4 B = 512 MiB in float32: purely bandwidth-bound.
        Shape("large", {"M": 8192, "N": 16384}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
