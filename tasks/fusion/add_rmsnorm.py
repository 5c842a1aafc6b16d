"""Residual add + RMSNorm as Gemma-2/Gemma-3 do it ("sandwich" norms), returning both the new
residual stream and the normalised input of the next sublayer.

rmsnorm_scale_residual covers the plain pre-norm step h = x + residual, y = rmsnorm(h) * w. In
Gemma-2/3 the sublayer output is itself normalised before the add (post_attention_layernorm),
and the sum is normalised again for the MLP (pre_feedforward_layernorm); a fused kernel does the
two row reductions and the add in one pass over the row:

  branch = rmsnorm(x) * (1 + w_post)          (Gemma's RMSNorm scales by 1 + weight)
  h      = residual + branch                  returned: the residual stream
  y      = rmsnorm(h) * (1 + w_pre)           returned: the next sublayer's input
  rmsnorm(v) = v / sqrt(mean(v^2, -1) + 1e-6)

Precision, as Gemma's modules run in bfloat16: each RMSNorm computes in float32 and rounds its
output to the dtype, so branch and h are dtype values (h is what the residual stream stores).
The reference rounds at exactly those points; the float64 reference does not round at all and
the contract (default tolerances) leaves room for those two roundings.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

EPS = 1e-6


def _gemma_rmsnorm(v, w):
    compute = torch.promote_types(v.dtype, torch.float32)
    v32 = v.to(compute)
    out = v32 * torch.rsqrt(v32.pow(2).mean(dim=-1, keepdim=True) + EPS) * (1.0 + w.to(compute))
    return out.to(v.dtype)


def reference(x, residual, w_post, w_pre):
    h = residual + _gemma_rmsnorm(x, w_post)
    return _gemma_rmsnorm(h, w_pre), h


def make_inputs(shape, dtype, gen):
    t, d = shape["tokens"], shape["hidden"]
    x = randn(gen, (t, d), dtype, scale=3.0, offset=0.2, outliers=1e-3)  # the attention output
    # The residual stream: larger than one normalised branch, with a few huge channels that dominate
    # the mean square of their row.
    residual = randn(gen, (t, d), dtype, scale=2.0, offset=-0.1, outliers=2e-3, outlier_scale=50.0)
    # Gemma stores norm weights around 0 (the module adds 1); signed, so 1 + w ranges ~0.4 .. 1.6.
    w_post = randn(gen, (d,), dtype, scale=0.3, offset=0.05)
    w_pre = randn(gen, (d,), dtype, scale=0.3, offset=-0.05)
    return (x, residual, w_post, w_pre)


def flops(shape):
    return 12.0 * shape["tokens"] * shape["hidden"]  # two square-sums and two normalise + scale, an add


def nbytes_moved(shape, dtype):
    t, d = shape["tokens"], shape["hidden"]
    return float(4 * nbytes((t, d), dtype) + 2 * nbytes((d,), dtype))


TASK = Task(
    name="add_rmsnorm",
    category="fusion",
    description="Gemma-2 sandwich norm step: h = residual + rmsnorm(x) * (1 + w_post); y = rmsnorm(h) * (1 + w_pre), eps 1e-6, over [T, D]; returns (y, h)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"tokens": 64, "hidden": 1024}, "small"),
        # One token (a decode step) and a hidden size that is not a multiple of any block size.
        Shape("awkward", {"tokens": 1, "hidden": 3001}, "awkward"),
        # Gemma-2-9B (hidden 3584) over 16384 tokens: x, residual read, y, h written, 896 MiB in float32.
        Shape("large", {"tokens": 16384, "hidden": 3584}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
