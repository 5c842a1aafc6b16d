"""Inverse error function near the poles at +-1.

erfinv(+-1) = +-inf and |x| > 1 gives NaN; both appear in the inputs and must sit at the same
positions. The rest of the contract is the default allclose against float64.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, uniform


def reference(x):
    return torch.erfinv(x)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    eps = torch.finfo(dtype).eps
    # 70%: uniform on (-1, 1), the central branch. 25%: 1 - d with d log-uniform between 1 ulp of
    # the dtype below 1 and 0.1, with random sign: the tail branch, where erfinv grows like
    # sqrt(-log d) and a central-branch polynomial is badly wrong. 5%: exactly +-1 (-> +-inf) or
    # |x| in (1, 2] (-> NaN).
    u = uniform(gen, (r, c), torch.float32, -1.0, 1.0)
    lo, hi = torch.log(torch.tensor(eps / 2)), torch.log(torch.tensor(0.1))
    d = torch.exp(uniform(gen, (r, c), torch.float32, float(lo), float(hi)))
    sign = torch.sign(uniform(gen, (r, c), torch.float32, -1.0, 1.0))
    sign = torch.where(sign == 0, torch.ones_like(sign), sign)
    tail = sign * (1.0 - d)
    edge = sign * torch.where(uniform(gen, (r, c), torch.float32, 0.0, 1.0) < 0.5, torch.ones_like(d), 1.0 + 10 * d)
    pick = uniform(gen, (r, c), torch.float32, 0.0, 1.0)
    x = torch.where(pick < 0.70, u, torch.where(pick < 0.95, tail, edge))
    return (x.to(dtype),)


def flops(shape):
    return 15.0 * shape["rows"] * shape["cols"]  # log, sqrt and a rational approximation


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="erfinv",
    category="math",
    description="torch.erfinv(x) of [R, C] with x crowding the poles at +-1 (exact +-1 -> +-inf, |x| > 1 -> NaN)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # The reference is float64 erfinv of the rounded input: near +-1 the function is steep, but the
    # input is exact, so only the kernel's own approximation error counts. Finite outputs have rms
    # ~1.2 and magnitudes up to ~4 (float32) / ~2.9 (bfloat16); the default tolerances apply.
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
