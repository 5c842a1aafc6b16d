"""out = x.index_add(0, index, src): rows of src added into rows of x, with repeated indices.

Why not bit-exact, and why not the default AllClose: rows hit by several indices are sums whose
float rounding depends on the order of the additions (atomics on a GPU, any order at all), so no
single answer is exact. The error of summing the k + 1 terms t_0 = x[n], t_j = src[m_j] of an
output element, in ANY order (recursive, pairwise, atomics), is bounded by
    |out - exact| <= gamma_k * sum_j |t_j|,  gamma_k = k u / (1 - k u)
(Higham, Accuracy and Stability of Numerical Algorithms, sec. 4.2), u the unit roundoff of the
type the sum is accumulated in. Accumulating in float32 and rounding once to bfloat16 adds at
most u_bf16 |out|, which is covered by taking u of the output dtype and k + 1 in place of k. The
bound depends on sum |t_j|, which varies per element, so a per-element check (below) is tighter
than any rms-scaled atol: near-zero sums of large terms legitimately carry an error that
AllClose's atol (1e-5 x rms) would reject for some orders.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Custom, compare_sum_bound
from mkbench.taskkit import nbytes, randint, randn

# Slack over the worst-case bound (covers 1/(1 - k u) and leaves room; measured errors of the
# torch reference at the task dtype are far below 1x the bound).
SLACK = 2.0


def reference(x, index, src):
    return x.index_add(0, index, src)


def make_inputs(shape, dtype, gen):
    n, d, m = shape["N"], shape["D"], shape["M"]
    x = randn(gen, (n, d), dtype, scale=1.0, offset=0.05)
    # M > N random destinations: most rows are hit several times (about Poisson(M / N)), some
    # not at all; the first and last rows are always hit, row 0 at least three times.
    index = randint(gen, (m,), 0, n)
    index[0] = 0
    index[m // 2] = 0
    index[m - 1] = 0
    index[m // 3] = n - 1
    src = randn(gen, (m, d), dtype, scale=1.0, offset=0.05, outliers=1e-3)
    return (x, index, src)


def check_scatter_add(ctx):
    x, index, src = ctx.inputs
    (out,), (ref,) = ctx.outputs, ctx.reference()
    hits = torch.bincount(index, minlength=x.shape[0]).to(torch.float64).unsqueeze(-1)  # k per row
    mag = x.to(torch.float64).abs().index_add(0, index, src.to(torch.float64).abs())  # sum |t_j|
    return compare_sum_bound(out, ref, hits, mag, SLACK)


def flops(shape):
    return float(shape["M"] * shape["D"])


def nbytes_moved(shape, dtype):
    n, d, m = shape["N"], shape["D"], shape["M"]
    return float(2 * nbytes((n, d), dtype) + nbytes((m, d), dtype) + nbytes((m,), torch.int64))


TASK = Task(
    name="scatter_add_rows",
    category="index",
    description="x.index_add(0, index, src): x [N, D], int64 index [M] with repeats, src [M, D] -> [N, D] (dtype = values' dtype)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 256, "D": 128, "M": 1024}, "small"),
        # Odd sizes, a masked tail along D, some rows hit many times and some never.
        Shape("awkward", {"N": 97, "D": 67, "M": 301}, "awkward"),
        Shape("large", {"N": 65536, "D": 1024, "M": 131072}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(
        fn=check_scatter_add,
        description=(
            f"per element, in float64 against the float64 reference: |out - ref| <= {SLACK:g} (k+1) u (|x| + sum |src| over "
            "the k rows added into it), u the output dtype's unit roundoff: the worst-case error of summing in any order "
            "(atomics included; Higham sec. 4.2), so it holds for every summation order; output must be finite"
        ),
    ),
    flops=flops,
    bytes=nbytes_moved,
)
