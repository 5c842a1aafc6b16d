import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, randn


def reference(a, b):
    return torch.matmul(a, b)


def make_inputs(shape, dtype, gen):
    m, k, n = shape["M"], shape["K"], shape["N"]
    # Zero-mean operands with a few outliers: products cancel, so atol (x rms) and rtol both matter.
    a = randn(gen, (m, k), dtype, scale=1.0, offset=0.05, outliers=1e-3, outlier_scale=8.0)
    b = randn(gen, (k, n), dtype, scale=0.5, offset=-0.02, outliers=1e-3, outlier_scale=8.0)
    return (a, b)


def flops(shape):
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def nbytes_moved(shape, dtype):
    m, k, n = shape["M"], shape["K"], shape["N"]
    return float((m * k + k * n + m * n) * itemsize(dtype))


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
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
