"""Grouped GEMM (the MoE expert matmul): rows of a packed activation matrix are sorted by group,
and each group's rows are multiplied by that group's weight matrix.

Layout, written out:
  * a [T, K]: rows of all groups packed one after another (sorted by group)
  * w [G, K, N]: one [K, N] weight matrix per group
  * offsets int32 [G]: cumulative end rows (the torch._grouped_mm convention): group g owns rows
    [offsets[g-1], offsets[g]) with offsets[-1] := 0; offsets are non-decreasing and
    offsets[G-1] = T. Groups may be empty (offsets[g] == offsets[g-1]); the reference gives rows
    that no group owns (only possible for malformed offsets) zeros.
  * out [T, N]: out[r] = a[r] @ w[g(r)]
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import itemsize, randn

# float32 atol, derived as for tasks/matmul/matmul.py: a float32 accumulation over K terms carries
# an error of order u * sqrt(K) * rms (u = 2^-24) whatever the kernel; at K = 8192 the maximum over
# 67M outputs reached 0.8-1.04x the default bound (1e-5 x rms) on an H100. The large shape here has
# K = 4096 and 117M outputs, so the default would fail correct kernels at random; 5e-5 x rms leaves
# room while TF32 products and bfloat16 operands (the bf16_compute control) fail by far. rtol
# stays 1e-4; bfloat16 keeps its default.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(a, w, offsets):
    out = torch.zeros((a.shape[0], w.shape[2]), dtype=a.dtype, device=a.device)
    start = 0
    for g, end in enumerate(offsets.tolist()):
        if end > start:
            out[start:end] = torch.matmul(a[start:end], w[g])
        start = end
    return out


def make_inputs(shape, dtype, gen):
    t, k, n, g = shape["T"], shape["K"], shape["N"], shape["G"]
    # Router-like imbalance: each row picks a group at random with skewed probabilities (group 0
    # gets the most rows); group 1 is always empty (an expert that received no tokens), and the
    # last group keeps at least one row.
    probs = torch.linspace(2.0, 1.0, g, device=gen.device)
    probs[1] = 0.0
    ids = torch.multinomial(probs, t, replacement=True, generator=gen)
    ids[-1] = g - 1
    counts = torch.bincount(ids, minlength=g)
    offsets = torch.cumsum(counts, 0).to(torch.int32)
    a = randn(gen, (t, k), dtype, scale=1.0, offset=0.05, outliers=1e-3, outlier_scale=8.0)
    w = randn(gen, (g, k, n), dtype, scale=k ** -0.5, offset=-0.1 * k ** -0.5, outliers=1e-3, outlier_scale=8.0)
    return (a, w, offsets)


def flops(shape):
    return 2.0 * shape["T"] * shape["K"] * shape["N"]


def nbytes_moved(shape, dtype):
    t, k, n, g = shape["T"], shape["K"], shape["N"], shape["G"]
    # Every expert's weights are read (all but the empty one in these inputs; counted in full).
    return float((t * k + g * k * n + t * n) * itemsize(dtype) + 4 * g)


TASK = Task(
    name="grouped_gemm",
    category="matmul",
    description="grouped GEMM (MoE experts): rows of a [T, K] packed by group, w [G, K, N], int32 cumulative offsets [G]; "
                "out[r] = a[r] @ w[group of r]; float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"T": 200, "K": 64, "N": 96, "G": 4}, "small"),
        # Odd sizes everywhere; groups of a few rows (some a single row) and one empty group.
        Shape("awkward", {"T": 37, "K": 33, "N": 17, "G": 5}, "awkward"),
        # Mixtral-8x7B expert up-projection (4096 -> 14336, 8 experts) for 4096 tokens routed
        # top-2 (8192 rows): 2.5 GB of fp32 traffic, mostly the expert weights.
        Shape("large", {"T": 8192, "K": 4096, "N": 14336, "G": 8}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
