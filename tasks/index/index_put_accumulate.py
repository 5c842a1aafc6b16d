"""out = x.index_put((rows, cols), values, accumulate=True): scalar values added into single
elements of x at (row, col) pairs, with repeated pairs (every addition counts).

Why not bit-exact, and why not the default AllClose (as for tasks/index/scatter_add_rows.py):
elements hit by several pairs are sums whose rounding depends on the order of the additions
(atomics on a GPU: any order). The error of summing the k + 1 terms t_0 = x[r, c], t_j = values[m_j]
of an output element, in ANY order, is bounded by
    |out - exact| <= gamma_k * sum_j |t_j|,  gamma_k = k u / (1 - k u)
(Higham, Accuracy and Stability of Numerical Algorithms, sec. 4.2), u the unit roundoff of the
type the sum is accumulated in; accumulating in float32 and rounding once to bfloat16 is covered
by taking u of the output dtype and k + 1 in place of k. The check is per element, against the
float64 reference.

Inputs: about one pair per two elements at random positions (most elements hit 0-2 times), plus a
hot spot: 5% of the pairs all target element (0, 0), so one sum has hundreds of terms.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Custom, compare_sum_bound
from mkbench.taskkit import nbytes, randint, randn

SLACK = 2.0  # over the worst-case bound: covers 1/(1 - k u) and leaves room


def reference(x, rows, cols, values):
    return x.index_put((rows, cols), values, accumulate=True)


def make_inputs(shape, dtype, gen):
    n, d, m = shape["N"], shape["D"], shape["M"]
    x = randn(gen, (n, d), dtype, scale=1.0, offset=0.05)
    rows = randint(gen, (m,), 0, n)
    cols = randint(gen, (m,), 0, d)
    hot = max(2, m // 20)
    rows[:hot] = 0
    cols[:hot] = 0
    rows[m - 1], cols[m - 1] = n - 1, d - 1
    values = randn(gen, (m,), dtype, scale=1.0, offset=0.05, outliers=1e-3)
    return (x, rows, cols, values)


def check(ctx):
    x, rows, cols, values = ctx.inputs
    (out,), (ref,) = ctx.outputs, ctx.reference()
    flat = rows * x.shape[1] + cols
    hits = torch.bincount(flat, minlength=x.numel()).view(x.shape).to(torch.float64)  # k per element
    mag = x.to(torch.float64).abs().index_put((rows, cols), values.to(torch.float64).abs(), accumulate=True)  # sum |t_j|
    return compare_sum_bound(out, ref, hits, mag, SLACK)


def flops(shape):
    return float(shape["M"])


def nbytes_moved(shape, dtype):
    n, d, m = shape["N"], shape["D"], shape["M"]
    return float(2 * nbytes((n, d), dtype) + nbytes((m,), dtype) + 2 * nbytes((m,), torch.int64))


TASK = Task(
    name="index_put_accumulate",
    category="index",
    description="x.index_put((rows, cols), values, accumulate=True): x [N, D], int64 rows/cols [M] with repeated pairs, "
                "values [M] -> [N, D] (dtype = values' dtype)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 64, "D": 128, "M": 4096}, "small"),
        Shape("awkward", {"N": 37, "D": 33, "M": 999}, "awkward"),
        # 16M accumulations into a 8192 x 8192 matrix: 857 MB of fp32 + int64 traffic.
        Shape("large", {"N": 8192, "D": 8192, "M": 16777216}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(
        fn=check,
        description=(
            f"per element, in float64 against the float64 reference: |out - ref| <= {SLACK:g} (k+1) u (|x| + sum |values| over "
            "the k pairs that hit it), u the output dtype's unit roundoff: the worst-case error of summing in any order "
            "(atomics included; Higham sec. 4.2); output must be finite"
        ),
    ),
    flops=flops,
    bytes=nbytes_moved,
)
