"""x ** p for a tensor x and a Python float exponent p (not an integer: p = 2.5, -1.5, 0.75).

Contract (relative, not rms-scaled: outputs span ~2^-120 .. 2^120 in float32):
  * reference: float64 pow of the same (rounded) x, rounded once to the output dtype
  * finite outputs: |out - ref| <= rtol |ref| + s, rtol the default per dtype (float32 1e-4,
    float16 1e-2, bfloat16 2e-2), s the dtype's smallest subnormal
  * special values follow IEEE pow, and their positions must match: x < 0 -> NaN (p not an
    integer), x = +0 -> +0 (p > 0) or +inf (p < 0), x = +inf -> +inf (p > 0) or +0 (p < 0), x = 1 -> 1
pow computed as exp2(p * log2(x)) in float32 is accurate enough (relative error about
|p log2 x| * 2^-24 <= 1e-5); computing it in bfloat16 is not.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import relative_rounded
from mkbench.taskkit import nbytes, uniform


def reference(x, p):
    return torch.pow(x, p)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    p = float(shape["p"])
    fi = torch.finfo(dtype)
    # log2(x) uniform over the range where x ** p is a normal number of the dtype (2 binades of
    # margin at the top), so the result exercises the whole exponent range.
    e_max = min(float(torch.log2(torch.tensor(fi.max))) - 2, -float(torch.log2(torch.tensor(fi.tiny)))) / abs(p)
    x = torch.exp2(uniform(gen, s, torch.float32, -e_max, e_max).double())
    # About 1% each: x = 1 exactly, +0, +inf, and negative x (NaN).
    special = uniform(gen, s, torch.float32, 0.0, 1.0).double()
    x = torch.where(special < 0.01, torch.ones_like(x), x)
    x = torch.where((special >= 0.01) & (special < 0.02), torch.zeros_like(x), x)
    x = torch.where((special >= 0.02) & (special < 0.03), torch.full_like(x, float("inf")), x)
    x = torch.where((special >= 0.03) & (special < 0.04), -x, x)
    return (x.to(dtype), p)


def flops(shape):
    return 4.0 * shape["rows"] * shape["cols"]  # log2, multiply, exp2, special-case select


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="pow_scalar",
    category="math",
    description="torch.pow(x, p) of [R, C] with a non-integer Python float exponent p, results over the dtype's whole range, IEEE special values",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024, "p": 2.5}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097, "p": -1.5}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192, "p": 0.75}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=relative_rounded(
        "relative: |out - ref| <= rtol |ref| + smallest subnormal, ref = float64 pow rounded to the output dtype, "
        "rtol float32 1e-4, float16 1e-2, bfloat16 2e-2; NaN/inf positions must match (x < 0 -> NaN, 0 ** p<0 -> inf)"),
    flops=flops,
    bytes=nbytes_moved,
)
