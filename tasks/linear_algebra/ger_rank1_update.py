"""BLAS ger: out = A + alpha * x y^T, A [M, N], x [M], y [N], out of place (A is not modified).

Contract: allclose against float64 (the dtype's default rtol and atol x rms) plus, per element, the
rounding error eager itself commits (RoundingBound, slack 2; derivation in rounding_magnitude). Why:
the sum cancels in places (A and alpha x y of opposite signs and both ~10-30 where an outlier of A
meets an outlier row of x), and there an error that is a fraction of an ulp of the terms is many
ulps of the result. On 4 H200s eager bfloat16 failed the plain allclose at the large shape: "1/67108864
elements outside rtol=0.02 atol=0.02*rms (worst: got -1.0625, expected -1.00781)"; the same rounding on
the CPU reproduces it (a = 12.0625, x = -6.1875, y = -2.640625: got -1.0625, expected -1.00859).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import RoundingBound
from mkbench.taskkit import itemsize, randn


def reference(a, x, y, alpha):
    return a + alpha * torch.outer(x, y)


def rounding_magnitude(a, x, y, alpha):
    """First-order error analysis of eager, a + alpha * torch.outer(x, y), which rounds each op's
    result to the task's dtype (u its unit roundoff, 2^-8 at bfloat16; each product and sum is
    formed exactly or in float32 before that rounding, alpha stays a float32 scalar), p = alpha x_i y_j:
        q = x_i y_j rounded                 error <= u |x_i y_j|, carried as |alpha| u |x_i y_j| = u |p|
        r = alpha q rounded                 u |p|
        out = a + r rounded                 u |a + p|
    so |out - ref| <= u (2 |p| + |a + p|) (+ O(u^2)), in units of u: m = 2 |p| + |a + p|. Only
    the last term is relative to the result; the first two are relative to the terms, which is what
    the default rtol cannot cover where a + p cancels (|a + p| << |p| ~ |a|). The contract allows
    slack 2 x u x m: an implementation that rounds alpha x first and then multiplies by y (the
    same two roundings), or that also rounds alpha to the dtype (one more u |p|), or fuses the
    whole update in float32 (one rounding, u |a + p|) stays within 3 |p| + |a + p| <= 2 m. Where the
    sum cancels (|a| ~ |p|, |a + p| ~ 1) the allowance is ~2u (|a| + |p|): eager's worst case is half
    of it, and an answer off by 3 ulps of |a| + |p| (an ulp of v is more than u |v|) exceeds it
    (tests/test_contracts.py). At float32, u = 2^-24 leaves the allowance far below what the
    bf16_compute control misses by."""
    p = alpha * torch.outer(x, y)
    return (2 * p.abs() + (a + p).abs(),)


def make_inputs(shape, dtype, gen):
    m, n = shape["M"], shape["N"]
    # The update is as large as A (rms ~ 1 each), so returning A unchanged fails, and the sum
    # cancels in places, where atol (x rms) takes over from rtol.
    a = randn(gen, (m, n), dtype, scale=1.0, offset=0.1, outliers=1e-3, outlier_scale=8.0)
    x = randn(gen, (m,), dtype, scale=1.0, offset=0.2, outliers=1e-3, outlier_scale=8.0)
    y = randn(gen, (n,), dtype, scale=1.0, offset=-0.1)
    return (a, x, y, -0.8)


def flops(shape):
    return 2.0 * shape["M"] * shape["N"]


def nbytes_moved(shape, dtype):
    m, n = shape["M"], shape["N"]
    return float((2 * m * n + m + n) * itemsize(dtype))


TASK = Task(
    name="ger_rank1_update",
    category="linear_algebra",
    description="BLAS ger rank-1 update out = A + alpha x y^T, A [M, N], x [M], y [N] (alpha -0.8), out of place",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 256, "N": 384}, "small"),
        Shape("awkward", {"M": 1, "N": 4099}, "awkward"),
        # A read and out written: 2 x 256 MiB in float32.
        Shape("large", {"M": 8192, "N": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # slack 2 over eager's first-order bound (rounding_magnitude's docstring says why 2)
    contract=RoundingBound(magnitudes=rounding_magnitude, slack=2.0, description=(
        "allclose vs float64 (the dtype's default rtol, atol x rms) plus 2 u (2 |alpha x_i y_j| + |out_ij|): eager's "
        "three roundings (x y, alpha (x y), A + alpha x y) to the output dtype, first order; the first two are "
        "relative to the terms, not the result, which cancels where A ~ -alpha x y")),
    flops=flops,
    bytes=nbytes_moved,
)
