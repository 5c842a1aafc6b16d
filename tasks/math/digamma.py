"""digamma (psi) over its hard regions.

Contract: allclose against the float64 digamma of the same (rounded) input with an absolute
atol: |out - ref| <= atol + rtol |ref|, default numbers per dtype (float32: rtol 1e-4, atol 1e-5;
bfloat16: 2e-2, 2e-2). Outputs span 1e-3 (near the roots, e.g. x0 = 1.4616) to ~1000 (x = 1e-3,
next to the pole at 0; rms ~130), so an rms-scaled atol would be set by the pole values and wave
the rest through. Near a
root the absolute error of an accurate kernel is a few ulps of O(1) terms (~1e-6), 10x inside
atol. Pole semantics follow torch: digamma(+0) = -inf, negative integers give NaN; those
positions must match (the inputs hold no -0).

How close to the poles: arguments n + e have |e| >= 1e-2. There the reflection term
pi / tan(pi x) computed with a rounded pi * x (|x| < 10, rounding error <= 2.4e-6 absolute in the
argument) is still within 1.5e-5 relative of exact, so a standard float32 implementation passes;
closer to the pole that rounding alone would exceed rtol, and a kernel would have to reduce the
argument exactly (x - round(x)) first.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose
from mkbench.taskkit import log_uniform, nbytes, randint, randn, uniform


def reference(x):
    return torch.digamma(x)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    s = (r, c)
    # 30% near the poles 0, -1, ..., -9 (n + e, |e| log-uniform in [1e-2, 0.5], either side)
    # 15% near the positive root 1.4616 (N(1.4616, 0.05))
    # 34% positive, log-uniform in [1e-3, 20] (the recurrence region and small x ~ -1/x)
    # 20% large, log-uniform in [20, 1e6] (asymptotic series, psi ~ log x)
    #  1% exact non-positive integers (+0 -> -inf, negative -> NaN)
    n = -randint(gen, s, 0, 10, torch.float32) + 0.0  # + 0.0 turns -0 into +0
    sign = torch.where(uniform(gen, s, torch.float32, -1.0, 1.0) < 0, -1.0, 1.0)
    near_pole = n + sign * log_uniform(gen, s, 1e-2, 0.5)
    near_root = randn(gen, s, torch.float32, scale=0.05, offset=1.4616321)
    moderate = log_uniform(gen, s, 1e-3, 20.0)
    large = log_uniform(gen, s, 20.0, 1e6)
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    x = torch.where(pick < 0.30, near_pole, torch.where(pick < 0.45, near_root, torch.where(
        pick < 0.79, moderate, torch.where(pick < 0.99, large, n))))
    return (x.to(dtype),)


def flops(shape):
    return 20.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="digamma",
    category="math",
    description="torch.digamma(x) of [R, C]: near the poles at 0..-9, near the root 1.4616 and up to x = 1e6",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(tolerances=dict(DEFAULT_TOLERANCES), scale="abs"),
    flops=flops,
    bytes=nbytes_moved,
)
