"""Modified Bessel function of the first kind, order 0 (torch.special.i0 / torch.i0).

Contract (relative: i0 grows like e^|x| / sqrt(2 pi |x|), outputs span 1 .. 1e36):
  * reference: float64 i0 of the same (rounded) x, rounded once to the output dtype
  * finite outputs: |out - ref| <= rtol |ref| + s, rtol the default per dtype (float32 1e-4,
    bfloat16 2e-2), s the dtype's smallest subnormal; NaN positions must match
Inputs reach |x| = 85 (i0 = 4.5e35, below float32's max 3.4e38 with a margin): a series or
polynomial valid only for small |x|, or an unscaled e^x * poly(1/x) that overflows early, fails.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import relative_rounded
from mkbench.taskkit import nbytes, randint, randn, uniform

X_MAX = 85.0


def reference(x):
    return torch.special.i0(x)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    # 60% N(0, 4^2) (the small-argument branch, |x| <= 8 in Cephes), 35% |x| uniform in [8, 85]
    # (the asymptotic branch), random sign (i0 is even); 0.5% NaN.
    small = randn(gen, s, torch.float32, scale=4.0).clamp(-X_MAX, X_MAX)
    sign = randint(gen, s, 0, 2, torch.float32) * 2 - 1
    large = sign * uniform(gen, s, torch.float32, 8.0, X_MAX)
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    x = torch.where(pick < 0.6, small, large)
    x = torch.where(pick > 0.995, torch.full_like(x, float("nan")), x)
    return (x.to(dtype),)


def flops(shape):
    return 30.0 * shape["rows"] * shape["cols"]  # exp and a 30-term Chebyshev series


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="bessel_i0",
    category="math",
    description="torch.special.i0(x) of [R, C] for |x| up to 85 (i0 up to 4.5e35), both branches of the approximation",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    # No float16: i0 overflows float16 at |x| ~ 12.9, leaving almost nothing of the large branch.
    dtypes=("float32", "bfloat16"),
    contract=relative_rounded(
        "relative: |out - ref| <= rtol |ref| + smallest subnormal, ref = float64 i0 rounded to the output dtype, "
        "rtol float32 1e-4, bfloat16 2e-2; NaN positions must match"),
    flops=flops,
    bytes=nbytes_moved,
)
