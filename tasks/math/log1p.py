"""log(1 + x) accurate for tiny x and for x next to -1.

Contract (relative: outputs span subnormal to ~88 in magnitude):
  * reference: float64 log1p of the same (rounded) x, rounded once to the output dtype
  * finite outputs: |out - ref| <= rtol |ref| + s, rtol the default per dtype (float32 1e-4,
    float16 1e-2, bfloat16 2e-2), s the dtype's smallest subnormal
  * special values, positions must match: log1p(-1) = -inf, log1p(x < -1) = NaN, log1p(inf) = inf
A third of the inputs have |x| < 1e-3 (down to subnormals): log(1 + x) in the input precision
rounds 1 + x and returns 0 or a result with few correct bits there, far outside rtol.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import relative_rounded
from mkbench.taskkit import nbytes, randint, uniform


def reference(x):
    return torch.log1p(x)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    fi = torch.finfo(dtype)
    log2_tiny = float(torch.log2(torch.tensor(fi.tiny, dtype=torch.float64)))
    log2_max = float(torch.log2(torch.tensor(fi.max, dtype=torch.float64)))
    sign = randint(gen, s, 0, 2, torch.float64) * 2 - 1
    # 33%: tiny, |x| log-uniform from 4 binades below the smallest normal to 1e-3, both signs
    tiny = sign * torch.exp2(uniform(gen, s, torch.float32, log2_tiny - 4, -10.0).double())
    # 30%: moderate, uniform on (-0.99, 4)
    moderate = uniform(gen, s, torch.float32, -0.99, 4.0).double()
    # 20%: next to -1, x = -1 + d with d log-uniform from 1 ulp of 1 to 0.01
    near_m1 = -1.0 + torch.exp2(uniform(gen, s, torch.float32, float(torch.log2(torch.tensor(fi.eps))), -6.6).double())
    # 15%: large, log-uniform from 4 up to the dtype's largest binade
    large = torch.exp2(uniform(gen, s, torch.float32, 2.0, log2_max - 1).double())
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    x = torch.where(pick < 0.33, tiny, torch.where(pick < 0.63, moderate, torch.where(pick < 0.83, near_m1, large)))
    # About 0.5% each: exactly -1 (-inf), below -1 (NaN), +inf.
    special = uniform(gen, s, torch.float32, 0.0, 1.0)
    x = torch.where(special < 0.005, torch.full_like(x, -1.0), x)
    x = torch.where((special >= 0.005) & (special < 0.01), -1.0 - moderate.abs() - 0.5, x)
    x = torch.where((special >= 0.01) & (special < 0.015), torch.full_like(x, float("inf")), x)
    return (x.to(dtype),)


def flops(shape):
    return 8.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="log1p",
    category="math",
    description="torch.log1p(x) of [R, C]: tiny |x| down to subnormals, x next to -1, large x, and -1 / < -1 / inf",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=relative_rounded(
        "relative: |out - ref| <= rtol |ref| + smallest subnormal, ref = float64 log1p rounded to the output dtype, "
        "rtol float32 1e-4, float16 1e-2, bfloat16 2e-2; NaN/inf positions must match (log1p(-1) = -inf)"),
    flops=flops,
    bytes=nbytes_moved,
)
