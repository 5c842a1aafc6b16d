"""log(exp(a) + exp(b)) without overflow or underflow.

Contract: allclose against float64 logaddexp of the same (rounded) inputs with an absolute atol:
|out - ref| <= atol + rtol |ref| with the default numbers per dtype (float32 rtol 1e-4, atol 1e-5;
float16 1e-2, 1e-2; bfloat16 2e-2, 2e-2). Absolute, not rms-scaled, because the rms (~50, set by
the far-offset elements) would allow 5e-4 everywhere. An accurate kernel computes
max(a, b) + log1p(exp(-|a - b|)), whose error is about u (|max| + 1); the result is near 0 only
when max(a, b) is in [-0.7, 0], so the absolute floor atol is never the binding term for a
correct kernel. Special values: logaddexp(-inf, -inf) = -inf (not NaN), +inf wins, NaN propagates.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose
from mkbench.taskkit import nbytes, randint, randn, uniform


def reference(a, b):
    return torch.logaddexp(a, b)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    # 80%: a ~ N(0, 4^2), b = a + d with |d| spread over N(0, 0.1), N(0, 3) and N(0, 30): close
    # pairs (log 2 matters) and far pairs (log1p of a tiny exp). 15%: both offset by the same
    # value in +-[90, 150], beyond exp's float32 range in both directions (a kernel without the
    # max shift returns inf or -inf). 5% special values.
    a = randn(gen, s, torch.float32, scale=4.0)
    spread = torch.tensor([0.1, 3.0, 30.0], device=gen.device)[randint(gen, s, 0, 3)]
    b = a + randn(gen, s, torch.float32) * spread
    far = uniform(gen, s, torch.float32, 90.0, 150.0) * torch.sign(randn(gen, s, torch.float32))
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    a = torch.where(pick < 0.15, a + far, a)
    b = torch.where(pick < 0.15, b + far, b)
    special = uniform(gen, s, torch.float32, 0.0, 1.0)
    ninf, pinf, nan = float("-inf"), float("inf"), float("nan")
    a = torch.where(special < 0.02, torch.full_like(a, ninf), a)                              # a = -inf
    b = torch.where(special < 0.01, torch.full_like(b, ninf), b)                              # both -inf
    a = torch.where((special >= 0.02) & (special < 0.03), torch.full_like(a, pinf), a)        # +inf
    b = torch.where((special >= 0.03) & (special < 0.04), torch.full_like(b, pinf), b)
    a = torch.where((special >= 0.035) & (special < 0.04), torch.full_like(a, ninf), a)       # -inf, +inf
    b = torch.where((special >= 0.04) & (special < 0.05), torch.full_like(b, nan), b)         # NaN
    return (a.to(dtype), b.to(dtype))


def flops(shape):
    return 6.0 * shape["rows"] * shape["cols"]  # max, sub, abs, exp, log1p, add


def nbytes_moved(shape, dtype):
    return float(3 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="logaddexp",
    category="math",
    description="torch.logaddexp(a, b) of two [R, C] tensors with values beyond exp's range, close and far pairs, +-inf and NaN",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 1, "cols": 100003}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=dict(DEFAULT_TOLERANCES), scale="abs"),
    flops=flops,
    bytes=nbytes_moved,
)
