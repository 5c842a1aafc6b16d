"""1 / sqrt(x) over the dtype's whole positive range, subnormals included.

Contract (relative: outputs span 2^-64 .. 2^75 in float32):
  * reference: float64 rsqrt of the same (rounded) x, rounded once to the output dtype
  * finite outputs: |out - ref| <= rtol |ref| + s, rtol the default per dtype (float32 1e-4,
    float16 1e-2, bfloat16 2e-2), s the dtype's smallest subnormal
  * special values, positions must match: rsqrt(+0) = +inf, rsqrt(x < 0) = NaN, rsqrt(+inf) = 0
Subnormal inputs are about 4% of the elements (float32: x down to 2^-149, rsqrt up to 2^74.5): a
kernel that flushes subnormal inputs to zero returns inf there and fails. A hardware approximate
rsqrt (relative error ~2^-22) is well inside rtol.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import relative_rounded
from mkbench.taskkit import nbytes, uniform


def reference(x):
    return torch.rsqrt(x)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    fi = torch.finfo(dtype)
    # log2(x) uniform from the smallest subnormal to the largest finite binade.
    lo = float(torch.log2(torch.tensor(fi.tiny * fi.eps, dtype=torch.float64)))
    hi = float(torch.log2(torch.tensor(fi.max, dtype=torch.float64)))
    x = torch.exp2(uniform(gen, s, torch.float32, lo, hi).double())
    # About 1% each: +0, +inf, negative.
    special = uniform(gen, s, torch.float32, 0.0, 1.0).double()
    x = torch.where(special < 0.01, torch.zeros_like(x), x)
    x = torch.where((special >= 0.01) & (special < 0.02), torch.full_like(x, float("inf")), x)
    x = torch.where((special >= 0.02) & (special < 0.03), -x, x)
    return (x.to(dtype),)


def flops(shape):
    return 2.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="rsqrt",
    category="math",
    description="torch.rsqrt(x) of [R, C] with x log-uniform from the smallest subnormal to the largest finite value, plus 0, inf and negatives",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 1, "cols": 100003}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=relative_rounded(
        "relative: |out - ref| <= rtol |ref| + smallest subnormal, ref = float64 rsqrt rounded to the output dtype, "
        "rtol float32 1e-4, float16 1e-2, bfloat16 2e-2; subnormal inputs must not be flushed; NaN/inf positions must match"),
    flops=flops,
    bytes=nbytes_moved,
)
