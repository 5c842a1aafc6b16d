"""C fmod: x - n y with n = trunc(x / y), the result carrying the sign of x.

fmod is exact in IEEE arithmetic (the result is always representable), so the float64 reference
of the rounded inputs is the exact answer and the default tolerances leave room only for
implementation slack, not for a wrong quotient. Quotients |x / y| reach 2^22: a kernel that
computes x - trunc(x / y) * y in the input precision gets n wrong or loses the low bits of the
result (its error is about ulp(x), up to |y| / 2 at 2^22) and fails. Special values follow C:
fmod(x, 0) = NaN, fmod(+-inf, y) = NaN, fmod(x, +-inf) = x, NaN propagates.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randint, uniform


def reference(x, y):
    return torch.fmod(x, y)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    # |y| log-uniform in [0.1, 10], |x| = |y| * q with q log-uniform in [2^-4, 2^22]; independent signs.
    y = torch.exp(uniform(gen, s, torch.float32, -2.3, 2.3)) * (randint(gen, s, 0, 2, torch.float32) * 2 - 1)
    q = torch.exp2(uniform(gen, s, torch.float32, -4.0, 22.0))
    x = y.abs() * q * (randint(gen, s, 0, 2, torch.float32) * 2 - 1)
    # About 0.5% each: y = 0, x = +-inf, y = +-inf, x NaN.
    special = uniform(gen, s, torch.float32, 0.0, 1.0)
    y = torch.where(special < 0.005, torch.zeros_like(y), y)
    x = torch.where((special >= 0.005) & (special < 0.01), torch.sign(x) * float("inf"), x)
    # fmod(x, inf) = x: those x are kept at the scale of y, or they would dominate the output rms.
    y_inf = (special >= 0.01) & (special < 0.015)
    x = torch.where(y_inf, y * q.clamp(max=1.0), x)
    y = torch.where(y_inf, torch.sign(y) * float("inf"), y)
    x = torch.where((special >= 0.015) & (special < 0.02), torch.full_like(x, float("nan")), x)
    return (x.to(dtype), y.to(dtype))


def flops(shape):
    return 4.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(3 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="fmod",
    category="math",
    description="torch.fmod(x, y) of two [R, C] tensors (sign of x) with quotients up to 2^22 and C special values (y = 0, inf)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    # No float16: |x| up to 2^22 x 10 is beyond float16's range.
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
