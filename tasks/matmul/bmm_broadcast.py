import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import gemm_flops, itemsize, randn

# float32 atol, derived as for tasks/matmul/matmul.py: a float32 accumulation over K terms carries
# an error of order u * sqrt(K) * rms (u = 2^-24) whatever the kernel; at K = 8192 the maximum over
# 67M outputs reached 0.8-1.04x the default bound (1e-5 x rms) on an H100. The large shape here has
# K = 4096 and 67M outputs (only sqrt(2) less), so the default would fail correct kernels at
# random; 5e-5 x rms leaves room while TF32 products and bfloat16 operands (the bf16_compute
# control) fail by far. rtol stays 1e-4; half types keep their defaults.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(x, w):
    return torch.matmul(x, w)  # w [K, N] broadcasts over the batch


def make_inputs(shape, dtype, gen):
    bs, m, k, n = shape["B"], shape["M"], shape["K"], shape["N"]
    x = randn(gen, (bs, m, k), dtype, scale=1.0, offset=0.05, outliers=1e-3, outlier_scale=8.0)
    w = randn(gen, (k, n), dtype, scale=k ** -0.5, offset=-0.1 * k ** -0.5, outliers=1e-3, outlier_scale=8.0)
    return (x, w)


def flops(shape):
    return gemm_flops(shape["M"], shape["N"], shape["K"], batch=shape["B"])


def nbytes_moved(shape, dtype):
    # The shared B is compulsory traffic once, not once per batch.
    bs, m, k, n = shape["B"], shape["M"], shape["K"], shape["N"]
    return float((bs * m * k + k * n + bs * m * n) * itemsize(dtype))


TASK = Task(
    name="bmm_broadcast",
    category="matmul",
    description="batched A [B, M, K] times one shared B [K, N] (torch.matmul broadcasting) -> [B, M, N]; "
                "float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"B": 4, "M": 64, "K": 96, "N": 80}, "small"),
        # Batch of single rows with odd K and N: flattening B x M into one GEMM is the fast path.
        Shape("awkward", {"B": 5, "M": 1, "K": 257, "N": 131}, "awkward"),
        # A 4096 -> 4096 projection shared by 8 sequences of 2048 tokens: 604 MB of fp32 traffic.
        Shape("large", {"B": 8, "M": 2048, "K": 4096, "N": 4096}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
