"""Two-argument arctangent over all four quadrants, signed zeros and infinities.

Contract: the default allclose against float64 atan2 of the same (rounded) inputs. Outputs lie in
[-pi, pi] with rms ~1.8, so atol (x rms) and rtol are meaningful everywhere. The quadrant and
signed-zero rules are torch's (IEEE / C99): atan2(+-0, -x) = +-pi for x >= 0 including -0,
atan2(+-0, +x) = +-0, atan2(+-inf, +-inf) = +-pi/4 or +-3pi/4, NaN in either input gives NaN.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randint, uniform


def _signed_log_uniform(gen, shape, lo_exp, hi_exp):
    mag = torch.exp2(uniform(gen, shape, torch.float32, lo_exp, hi_exp))
    sign = randint(gen, shape, 0, 2, torch.float32) * 2.0 - 1.0
    return sign * mag


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    # Magnitudes log-uniform over 2^-20 .. 2^20 (so |y / x| spans 2^-40 .. 2^40, beyond float16's
    # range: a kernel that forms y / x in the input dtype overflows), both signs: all four quadrants.
    # For 70% of the elements |y| is within a factor 2^3 of |x|, where the angle is far from 0 and
    # +-pi/2 and every bit of the ratio matters.
    x = _signed_log_uniform(gen, s, -20.0, 20.0)
    y_far = _signed_log_uniform(gen, s, -20.0, 20.0)
    y_near = x.abs() * torch.exp2(uniform(gen, s, torch.float32, -3.0, 3.0)) * (randint(gen, s, 0, 2, torch.float32) * 2 - 1)
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    y = torch.where(pick < 0.7, y_near, y_far)
    # Special values, each in about 1% of positions: signed zeros in y (-> 0 or +-pi by the sign of
    # x), signed zeros in x (-> +-pi/2), both zero, +-inf in either, and NaN in y.
    sign_y = torch.where(y < 0, -1.0, 1.0)
    sign_x = torch.where(x < 0, -1.0, 1.0)
    special = uniform(gen, s, torch.float32, 0.0, 1.0)
    y = torch.where(special < 0.01, sign_y * 0.0, y)
    x = torch.where((special >= 0.01) & (special < 0.02), sign_x * 0.0, x)
    both = (special >= 0.02) & (special < 0.03)
    y, x = torch.where(both, sign_y * 0.0, y), torch.where(both, sign_x * 0.0, x)
    y = torch.where((special >= 0.03) & (special < 0.04), sign_y * float("inf"), y)
    x = torch.where((special >= 0.035) & (special < 0.05), sign_x * float("inf"), x)
    y = torch.where((special >= 0.05) & (special < 0.055), torch.full_like(y, float("nan")), y)
    return (y.to(dtype), x.to(dtype))


def reference(y, x):
    return torch.atan2(y, x)


def flops(shape):
    return 12.0 * shape["rows"] * shape["cols"]  # ratio, polynomial, quadrant fix-up


def nbytes_moved(shape, dtype):
    return float(3 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="atan2",
    category="math",
    description="torch.atan2(y, x) of two [R, C] tensors over all quadrants, |y/x| from 2^-40 to 2^40, signed zeros, infinities and NaN",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 1, "cols": 100003}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
