"""RMSNorm followed by dynamic per-token symmetric int8 quantization: the input of a W8A8 attention
or MLP block (vLLM's rms_norm_dynamic_per_token_quant), fused so the normalised activation is
never written in floating point.

Contract, written out:
  * inputs: x [T, D] in the task dtype, weight [D] in the task dtype
  * y = x / sqrt(mean(x^2, -1) + 1e-6) * weight, computed in float32 (bfloat16 widened first) and
    NOT rounded to the input dtype before quantizing
  * granularity: one scale per token (row of y); symmetric, zero point 0
  * scale[t] = max(amax_t, 1e-8) / 127, amax_t = max |y[t, :]|; float32 [T]
  * q = clamp(round_half_to_even(y / scale[t]), -127, 127) as int8 [T, D] (-128 unused)
  * comparison, against exact (float64) arithmetic on the same inputs: scale within rtol 2e-5
    (see SCALE_RTOL); q exact, except that a difference of exactly 1 is accepted where y / scale
    lies within 1e-3 of a .5 tie. (The row's 1/rms cancels in y / scale, so q does not depend on
    the summation order; only the scale does.)
A float kernel fails (q must be int8 and exact), and so does one that rounds y to bfloat16 first.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Custom, compare_int8_scaled
from mkbench.taskkit import nbytes, randn

EPS = 1e-6
TIE_WINDOW = 1e-3
# scale = amax(|x * w|) * rstd / 127 inherits the relative error of rstd, i.e. half that of the
# float32 mean of squares over D terms: ~u log2(D) for a tree reduction, ~u sqrt(D / 3) for a
# sequential one (3.1e-6 at the large D = 8192; u = 2^-24), plus a few roundings (rsqrt, the
# weight product, the division by 127). 2e-5 leaves >6x over the sequential estimate, while a
# scale rounded through bfloat16 errs by up to 2^-9 = 2e-3 (the bf16_compute control is rejected).
SCALE_RTOL = 2e-5


def _quant(x, weight):
    """(unrounded y / scale, scale) in float32, or float64 for float64 inputs."""
    compute = torch.promote_types(x.dtype, torch.float32)
    x = x.to(compute)
    y = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * weight.to(compute)
    scale = y.abs().amax(dim=-1).clamp_min(1e-8) / 127.0
    return y / scale[:, None], scale


def reference(x, weight):
    v, scale = _quant(x, weight)
    return torch.round(v).clamp(-127, 127).to(torch.int8), scale.to(torch.float32)


def check(ctx):
    x, weight = ctx.inputs
    q, s = ctx.outputs
    v64, s64 = _quant(x.to(torch.float64), weight.to(torch.float64))
    return compare_int8_scaled(q, s, v64, s64, SCALE_RTOL, TIE_WINDOW)


def make_inputs(shape, dtype, gen):
    t, d = shape["tokens"], shape["hidden"]
    # Residual-stream activations: a few huge channels dominate both the row's mean square and its
    # amax, as in LLMs (the reason per-token scales are needed).
    x = randn(gen, (t, d), dtype, scale=1.0, offset=0.1, outliers=2e-3, outlier_scale=40.0)
    weight = randn(gen, (d,), dtype, scale=0.3, offset=1.0)
    return (x, weight)


def flops(shape):
    return 8.0 * shape["tokens"] * shape["hidden"]  # square-sum, normalise, scale, |.| max, divide, round/clamp


def bytes_moved(shape, dtype):
    t, d = shape["tokens"], shape["hidden"]
    return float(nbytes((t, d), dtype) + nbytes((d,), dtype) + nbytes((t, d), torch.int8) + 4 * t)


TASK = Task(
    name="rmsnorm_quant_int8",
    category="fusion",
    description="W8A8 block input: y = rmsnorm(x) * weight (eps 1e-6) in float32, then per-token symmetric int8 (round half to even, clamp +/-127); returns int8 q [T, D] and float32 scales [T]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"tokens": 64, "hidden": 1024}, "small"),
        # One token (a decode step) and a hidden size with a masked tail.
        Shape("awkward", {"tokens": 1, "hidden": 5003}, "awkward"),
        # Llama-3-70B (hidden 8192) over 16384 tokens: 512 MiB of float32 activations read.
        Shape("large", {"tokens": 16384, "hidden": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "per-token symmetric int8 of y = rmsnorm(x)*w (eps 1e-6, float32, unrounded): scale = max(amax,1e-8)/127 fp32 within "
        "rtol 2e-5 of exact; q = clamp(round_half_even(y/scale),-127,127) exact vs exact arithmetic, +/-1 only within 1e-3 of a .5 tie")),
    flops=flops,
    bytes=bytes_moved,
)
