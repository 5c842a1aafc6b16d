import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import gemm_operands, itemsize, randn

# float32 atol, derived as for tasks/matmul/matmul.py: a float32 accumulation over K terms carries
# an error of order u * sqrt(K) * rms (u = 2^-24) whatever the kernel; at K = 8192 the maximum over
# 67M outputs reached 0.8-1.04x the default bound (1e-5 x rms) on an H100. The large shape here has
# K = 4096 and 67M outputs (sqrt(2) less), and alpha * A @ B is about 2x the rms of beta * C, so
# the default would fail correct kernels at random; 5e-5 x rms leaves room while TF32 products and
# bfloat16 operands (the bf16_compute control) fail by far. rtol stays 1e-4; half types keep their
# defaults.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))

# Neither 1 nor 0: a kernel that drops either scalar, or swaps them, is far off.
ALPHA, BETA = 0.75, -1.5


def reference(c, a, b, alpha, beta):
    return torch.addmm(c, a, b, beta=beta, alpha=alpha)


def make_inputs(shape, dtype, gen):
    m, k, n = shape["M"], shape["K"], shape["N"]
    # alpha * A @ B has rms ~0.75 * 0.5 * sqrt(K); C is drawn at a comparable scale (with an
    # offset) so that both terms are visible in every output.
    a, b = gemm_operands(gen, (m, k), (k, n), dtype)
    c = randn(gen, (m, n), dtype, scale=0.25 * k ** 0.5, offset=0.1 * k ** 0.5, outliers=1e-3)
    return (c, a, b, ALPHA, BETA)


def flops(shape):
    m, k, n = shape["M"], shape["K"], shape["N"]
    return 2.0 * m * n * k + 3.0 * m * n  # the product, then two scalings and an add


def nbytes_moved(shape, dtype):
    m, k, n = shape["M"], shape["K"], shape["N"]
    return float((m * k + k * n + 2 * m * n) * itemsize(dtype))


TASK = Task(
    name="addmm_alpha_beta",
    category="matmul",
    description="torch.addmm: out = beta * C + alpha * (A @ B), A [M, K], B [K, N], C [M, N], alpha = 0.75, beta = -1.5 "
                "(passed as Python floats); float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 128, "K": 96, "N": 160}, "small"),
        # A single row and K, N that are not multiples of any tile size.
        Shape("awkward", {"M": 1, "K": 257, "N": 300}, "awkward"),
        # 8192 x 8192 output with K = 4096: 805 MB of fp32 traffic (C read, out written).
        Shape("large", {"M": 8192, "K": 4096, "N": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
