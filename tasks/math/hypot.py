"""hypot(x, y) = sqrt(x^2 + y^2) without overflow or underflow.

Contract (relative, not rms-scaled: outputs span the dtype's whole exponent range):
  * reference: float64 hypot of the same (rounded) inputs, rounded once to the output dtype, so
    a result overflows to inf exactly where the dtype overflows (no input here is that large)
  * finite outputs: |out - ref| <= rtol |ref| + s, rtol the default per dtype (float32 1e-4,
    float16 1e-2, bfloat16 2e-2), s the dtype's smallest subnormal (one ulp of a subnormal result)
  * NaN / inf positions must match: hypot(+-inf, NaN) = +inf (IEEE), NaN with a finite value is NaN
A kernel that squares in the input dtype fails: x^2 overflows for |x| > 1.8e19 (float32/bfloat16)
and underflows to 0 for |x| < 1e-23, and those magnitudes make up about half of the inputs.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import relative_rounded
from mkbench.taskkit import nbytes, randint, randn, uniform


def reference(x, y):
    return torch.hypot(x, y)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    fi = torch.finfo(dtype)
    # Exponents uniform from 6 binades below the smallest normal (subnormals) to 2 below the
    # largest finite value, so hypot itself stays finite. |y| is within 2^+-4 of |x| for 80% of
    # the pairs (both terms matter) and independent for 20% (one term vanishes).
    lo, hi = float(torch.log2(torch.tensor(fi.tiny))) - 6, float(torch.log2(torch.tensor(fi.max))) - 2
    ex = uniform(gen, s, torch.float32, lo, hi)
    ey = torch.where(uniform(gen, s, torch.float32, 0.0, 1.0) < 0.8,
                     (ex + randn(gen, s, torch.float32, scale=2.0)).clamp(lo, hi), uniform(gen, s, torch.float32, lo, hi))
    sx = randint(gen, s, 0, 2, torch.float32) * 2 - 1
    sy = randint(gen, s, 0, 2, torch.float32) * 2 - 1
    x = (sx * torch.exp2(ex.double())).to(dtype)
    y = (sy * torch.exp2(ey.double())).to(dtype)
    # About 1% each: both zero, x = +-inf, y = NaN, and x = inf with y = NaN (-> +inf).
    special = uniform(gen, s, torch.float32, 0.0, 1.0)
    zero = special < 0.01
    x = torch.where(zero, torch.zeros_like(x), x)
    y = torch.where(zero, torch.zeros_like(y), y)
    x = torch.where((special >= 0.01) & (special < 0.03), sx.to(dtype) * float("inf"), x)
    y = torch.where((special >= 0.02) & (special < 0.04), torch.full_like(y, float("nan")), y)
    return (x, y)


def flops(shape):
    return 6.0 * shape["rows"] * shape["cols"]  # abs, max, divide, multiply-add, sqrt, multiply


def nbytes_moved(shape, dtype):
    return float(3 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="hypot",
    category="math",
    description="torch.hypot(x, y) of two [R, C] tensors with magnitudes over the dtype's whole range (subnormal to near max), zeros, inf and NaN",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 1, "cols": 100003}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=relative_rounded(
        "relative: |out - ref| <= rtol |ref| + smallest subnormal, ref = float64 hypot rounded to the output dtype, "
        "rtol float32 1e-4, float16 1e-2, bfloat16 2e-2; NaN/inf positions must match (hypot(inf, NaN) = inf)"),
    flops=flops,
    bytes=nbytes_moved,
)
