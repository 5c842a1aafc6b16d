"""log|Gamma(x)| over its hard regions.

Contract: allclose against the float64 lgamma of the same (rounded) input with an absolute, not
rms-scaled, atol: |out - ref| <= atol + rtol |ref| with the default numbers per dtype (float32:
rtol 1e-4, atol 1e-5; bfloat16: 2e-2, 2e-2). Why absolute: outputs span 1e-4 (near the roots at
1 and 2) to 1.3e7 (x = 1e6), so an atol scaled by their rms (~1.2e6) would accept anything below
~12 in magnitude. Near the roots lgamma is O(1)-sloped (|lgamma'(1)| = 0.58, lgamma'(2) = 0.42),
so an accurate kernel's absolute error there is a few float32 ulps of O(1) terms (~1e-7), 100x
inside atol. Non-positive integers are poles: lgamma = +inf there, and inf positions must match.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose
from mkbench.taskkit import log_uniform, nbytes, randint, randn, uniform


def reference(x):
    return torch.lgamma(x)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    s = (r, c)
    # 30% near the poles 0, -1, ..., -9: n + e with |e| log-uniform in [1e-3, 0.5], either side
    #     (negative arguments use the reflection formula; lgamma ~ -log|e| there)
    # 20% near the roots 1 and 2 (lgamma = 0): 1 + d or 2 + d, d ~ N(0, 0.05)
    # 29% positive, log-uniform in [1e-3, 30] (the small-x branch and Stirling's switch-over)
    # 20% large, log-uniform in [30, 1e6] (lgamma up to 1.3e7: Stirling's series)
    #  1% exact non-positive integers: poles, lgamma = +inf
    n = -randint(gen, s, 0, 10, torch.float32)
    sign = torch.where(uniform(gen, s, torch.float32, -1.0, 1.0) < 0, -1.0, 1.0)
    near_pole = n + sign * log_uniform(gen, s, 1e-3, 0.5)
    near_root = 1.0 + randint(gen, s, 0, 2, torch.float32) + randn(gen, s, torch.float32, scale=0.05)
    moderate = log_uniform(gen, s, 1e-3, 30.0)
    large = log_uniform(gen, s, 30.0, 1e6)
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    x = torch.where(pick < 0.30, near_pole, torch.where(pick < 0.50, near_root, torch.where(
        pick < 0.79, moderate, torch.where(pick < 0.99, large, n))))
    return (x.to(dtype),)


def flops(shape):
    return 20.0 * shape["rows"] * shape["cols"]  # reflection, log, sin and a series


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="lgamma",
    category="math",
    description="torch.lgamma(x) of [R, C]: near the poles at 0..-9, near the roots 1 and 2, and up to x = 1e6",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    # No float16: lgamma(65504) = 6.6e5 overflows float16, so half the large-x range would be inf.
    dtypes=("float32", "bfloat16"),
    contract=AllClose(tolerances=dict(DEFAULT_TOLERANCES), scale="abs"),
    flops=flops,
    bytes=nbytes_moved,
)
