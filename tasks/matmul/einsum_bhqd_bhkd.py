import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, randn


def reference(q, k):
    return torch.einsum("bhqd,bhkd->bhqk", q, k)


def make_inputs(shape, dtype, gen):
    b, h, sq, sk, d = shape["B"], shape["H"], shape["Q"], shape["K"], shape["D"]
    # Queries and keys with a per-head-dim offset (as after RoPE-free projections with bias) and
    # outliers in a few channels; the reduction is over the head dim D (<= 128), short enough for
    # the default float32 tolerance.
    q = randn(gen, (b, h, sq, d), dtype, scale=1.0, offset=0.1, outliers=1e-3, outlier_scale=8.0)
    k = randn(gen, (b, h, sk, d), dtype, scale=1.0, offset=-0.05, outliers=1e-3, outlier_scale=8.0)
    return (q, k)


def flops(shape):
    return 2.0 * shape["B"] * shape["H"] * shape["Q"] * shape["K"] * shape["D"]


def nbytes_moved(shape, dtype):
    b, h, sq, sk, d = shape["B"], shape["H"], shape["Q"], shape["K"], shape["D"]
    return float(b * h * (sq * d + sk * d + sq * sk) * itemsize(dtype))


TASK = Task(
    name="einsum_bhqd_bhkd",
    category="matmul",
    description="attention scores einsum('bhqd,bhkd->bhqk'): q [B, H, Q, D] times k [B, H, K, D] over the head dim; "
                "float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"B": 2, "H": 4, "Q": 64, "K": 64, "D": 32}, "small"),
        # One query (a decode step), an odd key count, head dim 80 (not a power of two).
        Shape("awkward", {"B": 2, "H": 3, "Q": 1, "K": 77, "D": 80}, "awkward"),
        # Llama-3-8B scores (32 heads, head dim 128) for 4 sequences of 1024 tokens: 671 MB fp32.
        Shape("large", {"B": 4, "H": 32, "Q": 1024, "K": 1024, "D": 128}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
