"""Backward of RMSNorm over the last dim, y = x * rsqrt(mean(x^2) + 1e-6) * weight (the
tasks/normalization/rms_norm.py forward): given dy, x and weight, return (dx, dweight).

    rstd = 1 / sqrt(mean(x^2) + eps),  xhat = x * rstd,  g = dy * weight
    dx      = rstd * (g - xhat * mean(g * xhat))     (mean over the row)
    dweight = sum over rows of dy * xhat

Row 1 of x is scaled by 1e-3 so that mean(x^2) ~ 1e-6 ~ eps: eps value and placement change that
row's dx far beyond the tolerance.

float32 atol, derived: dweight is a column sum over R rows. One float32 chain of R additions per
column (a correct kernel that gives each column to one thread) carries an error of order
u * sqrt(R) * rms (u = 2^-24); simulated on CPU at the large shape (16384 x 4096, numpy float32
sequential column sums of dy * xhat), the worst column reached 1.6e-5 x rms: over the default
bound (1e-5 x rms). 5e-5 x rms covers it with 3x room, while bfloat16 rounding (the bf16_compute
control, ~2e-3 x rms) fails by far. rtol stays 1e-4; bfloat16 keeps its default.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import nbytes, randn

EPS = 1e-6
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(dy, x, weight):
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32  # opmath for half types
    dyf, xf, wf = dy.to(acc), x.to(acc), weight.to(acc)
    rstd = torch.rsqrt(xf.square().mean(-1, keepdim=True) + EPS)
    xhat = xf * rstd
    g = dyf * wf
    dx = rstd * (g - xhat * (g * xhat).mean(-1, keepdim=True))
    dweight = (dyf * xhat).sum(0)
    return dx.to(x.dtype), dweight.to(weight.dtype)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    x = randn(gen, (r, c), torch.float32, scale=1.0, offset=0.1, outliers=1e-3)
    x[1] *= 1e-3
    dy = randn(gen, (r, c), torch.float32, scale=1.0, offset=0.1, outliers=1e-3, outlier_scale=8.0)
    weight = randn(gen, (c,), torch.float32, scale=0.25, offset=1.0)
    return (dy.to(dtype), x.to(dtype), weight.to(dtype))


def flops(shape):
    # statistics (3), xhat (1), g (1), the row mean of g * xhat (2), dx (3), dweight (2)
    return 12.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return float(3 * nbytes((r, c), dtype) + 2 * nbytes((c,), dtype))


TASK = Task(
    name="rms_norm_backward",
    category="normalization",
    description="backward of RMSNorm x * rsqrt(mean(x^2) + 1e-6) * weight over the last dim of [R, C]: "
                "(dy, x, weight) -> (dx, dweight)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        # Llama-3-8B hidden size (4096) over 16384 tokens: 805 MB of fp32 traffic.
        Shape("large", {"rows": 16384, "cols": 4096}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
