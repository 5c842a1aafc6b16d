"""exp(x) - 1 accurate for tiny x, up to the overflow threshold and beyond it.

Contract (relative: outputs span subnormal to near the dtype's max):
  * reference: float64 expm1 of the same (rounded) x, rounded once to the output dtype, so the
    result overflows to +inf exactly where the dtype overflows (inputs keep clear of the threshold:
    finite results have x <= 88 in float32/bfloat16, <= 10.5 in float16; overflowing ones x >= 90 / 12)
  * finite outputs: |out - ref| <= rtol |ref| + s, rtol the default per dtype (float32 1e-4,
    float16 1e-2, bfloat16 2e-2), s the dtype's smallest subnormal
  * expm1(-inf) = -1, expm1(inf) = inf, NaN propagates; positions must match
A third of the inputs have |x| < 1e-3 (down to subnormals): exp(x) - 1 cancels there and fails.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import relative_rounded
from mkbench.taskkit import nbytes, randint, randn, uniform

# Largest finite-result input and smallest overflowing input per dtype (log(max) = 88.72 for
# float32 and bfloat16, 11.09 for float16), each with a margin.
LIMITS = {torch.float32: (88.0, 90.0), torch.bfloat16: (88.0, 90.0), torch.float16: (10.5, 12.0)}


def reference(x):
    return torch.expm1(x)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    fi = torch.finfo(dtype)
    fin, ovf = LIMITS[dtype]
    log2_tiny = float(torch.log2(torch.tensor(fi.tiny, dtype=torch.float64)))
    sign = randint(gen, s, 0, 2, torch.float32) * 2 - 1
    # 33% tiny (|x| from 4 binades below the smallest normal to 1e-3, both signs); 35% N(0, 3^2);
    # 20% large positive (uniform up to the finite limit); 8% very negative (-> -1); 2% overflow.
    tiny = sign * torch.exp2(uniform(gen, s, torch.float32, log2_tiny - 4, -10.0))
    moderate = randn(gen, s, torch.float32, scale=3.0)
    large = uniform(gen, s, torch.float32, 3.0, fin)
    negative = uniform(gen, s, torch.float32, -120.0, -3.0)
    overflow = uniform(gen, s, torch.float32, ovf, 2 * ovf)
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    x = torch.where(pick < 0.33, tiny, torch.where(pick < 0.68, moderate, torch.where(
        pick < 0.88, large, torch.where(pick < 0.96, negative, overflow))))
    # About 0.5% each: +inf, -inf, NaN.
    special = uniform(gen, s, torch.float32, 0.0, 1.0)
    x = torch.where(special < 0.005, torch.full_like(x, float("inf")), x)
    x = torch.where((special >= 0.005) & (special < 0.01), torch.full_like(x, float("-inf")), x)
    x = torch.where((special >= 0.01) & (special < 0.015), torch.full_like(x, float("nan")), x)
    return (x.to(dtype),)


def flops(shape):
    return 8.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="expm1",
    category="math",
    description="torch.expm1(x) of [R, C]: tiny |x| down to subnormals, up to and past the overflow threshold, +-inf and NaN",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=relative_rounded(
        "relative: |out - ref| <= rtol |ref| + smallest subnormal, ref = float64 expm1 rounded to the output dtype "
        "(overflow where the dtype overflows), rtol float32 1e-4, float16 1e-2, bfloat16 2e-2; NaN/inf positions must match"),
    flops=flops,
    bytes=nbytes_moved,
)
