"""Hyperbolic cosine up to the overflow threshold and beyond.

Contract (relative: outputs span 1 .. 2.2e38):
  * reference: float64 cosh of the same (rounded) x, rounded once to the output dtype, so the
    result is +inf exactly where the dtype overflows (inputs keep clear of the threshold: finite
    results have |x| <= 89 in float32/bfloat16, <= 11 in float16; overflowing ones |x| >= 90 / 12.5)
  * finite outputs: |out - ref| <= rtol |ref| + s, rtol the default per dtype (float32 1e-4,
    float16 1e-2, bfloat16 2e-2), s the dtype's smallest subnormal
  * cosh(+-inf) = +inf, NaN propagates; positions must match
cosh(89) = 2.2e38 is finite but e^89 = 4.5e38 is not: (e^x + e^-x) / 2 in the input precision
overflows for 88.7 < |x| <= 89 and fails; e^(|x| - log 2) + e^-|x| / 2 does not.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import relative_rounded
from mkbench.taskkit import nbytes, randint, randn, uniform

LN2 = 0.6931471805599453
LIMITS = {torch.float32: (89.0, 90.0), torch.bfloat16: (89.0, 90.0), torch.float16: (11.0, 12.5)}


def reference(x):
    # cosh(x) = e^(|x| - log 2) + e^-|x| / 2, which does not overflow before cosh does. (torch's
    # vectorised CPU cosh computes e^x / 2 and returns inf for 88.72 < |x| < 89.4.) Half types are
    # widened to float32 first: |x| - log 2 rounded to bfloat16 would be off by up to 0.25.
    wide = torch.promote_types(x.dtype, torch.float32)
    a = x.to(wide).abs()
    return (torch.exp(a - LN2) + 0.5 * torch.exp(-a)).to(x.dtype)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    fin, ovf = LIMITS[dtype]
    sign = randint(gen, s, 0, 2, torch.float32) * 2 - 1
    # 50% N(0, 3^2); 30% |x| uniform up to the finite limit; 10% |x| in [limit - 1, limit] (the
    # band just below overflow); 7% overflowing |x|; random signs (cosh is even).
    moderate = randn(gen, s, torch.float32, scale=3.0)
    large = sign * uniform(gen, s, torch.float32, 3.0, fin)
    edge = sign * uniform(gen, s, torch.float32, fin - 1.0, fin)
    overflow = sign * uniform(gen, s, torch.float32, ovf, 2 * ovf)
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    x = torch.where(pick < 0.5, moderate, torch.where(pick < 0.8, large, torch.where(pick < 0.9, edge, overflow)))
    # About 0.5% each: +-inf, NaN.
    special = uniform(gen, s, torch.float32, 0.0, 1.0)
    x = torch.where(special < 0.005, sign * float("inf"), x)
    x = torch.where((special >= 0.005) & (special < 0.01), torch.full_like(x, float("nan")), x)
    return (x.to(dtype),)


def flops(shape):
    return 5.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="cosh",
    category="math",
    description="torch.cosh(x) of [R, C] up to just below the overflow threshold (cosh(89) = 2.2e38) and past it, +-inf and NaN",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=relative_rounded(
        "relative: |out - ref| <= rtol |ref| + smallest subnormal, ref = float64 cosh rounded to the output dtype "
        "(inf where the dtype overflows), rtol float32 1e-4, float16 1e-2, bfloat16 2e-2; NaN/inf positions must match"),
    flops=flops,
    bytes=nbytes_moved,
)
