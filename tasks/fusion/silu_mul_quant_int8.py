"""SiLU-and-mul followed by dynamic per-token symmetric int8 quantization: the activation between
the gate/up and down projections of a W8A8 SwiGLU MLP (vLLM's silu_and_mul + per-token quant,
fused so the [T, N] activation is never written in floating point).

Contract, written out:
  * input: x [T, 2N] in the task dtype, the fused gate_up projection output: gate = x[:, :N],
    up = x[:, N:] (vLLM's layout)
  * h = silu(gate) * up, computed in float32 (bfloat16 inputs widened first) and NOT rounded to
    the input dtype before quantizing
  * granularity: one scale per token (row of h); symmetric, zero point 0
  * scale[t] = max(amax_t, 1e-8) / 127, amax_t = max |h[t, :]|; float32 [T]
  * q = clamp(round_half_to_even(h / scale[t]), -127, 127) as int8 [T, N] (-128 unused)
  * comparison, against exact (float64) arithmetic on the same inputs: scale within rtol 1e-6
    (~16 float32 ulps: silu, the product and the division each round once); q exact, except
    that a difference of exactly 1 is accepted where h / scale lies within 1e-3 of a .5 tie
    (float32 h, or multiplying by 1/scale, can land on the other side of a tie)
A float kernel fails (q must be int8 and exact), and so does one that rounds h to bfloat16 before
quantizing (a 2^-9 relative error moves h / scale by up to 0.25).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Custom, compare_int8_scaled
from mkbench.taskkit import nbytes, randint, randn

TIE_WINDOW = 1e-3
SCALE_RTOL = 1e-6


def _quant(x):
    """(unrounded h / scale, scale) in float32, or float64 for float64 inputs."""
    compute = torch.promote_types(x.dtype, torch.float32)
    gate, up = x.to(compute).chunk(2, dim=-1)
    h = torch.nn.functional.silu(gate) * up
    scale = h.abs().amax(dim=-1).clamp_min(1e-8) / 127.0
    return h / scale[:, None], scale


def reference(x):
    v, scale = _quant(x)
    return torch.round(v).clamp(-127, 127).to(torch.int8), scale.to(torch.float32)


def check(ctx):
    (x,) = ctx.inputs
    q, s = ctx.outputs
    v64, s64 = _quant(x.to(torch.float64))
    return compare_int8_scaled(q, s, v64, s64, SCALE_RTOL, TIE_WINDOW)


def make_inputs(shape, dtype, gen):
    t, n = shape["tokens"], shape["N"]
    gate = randn(gen, (t, n), torch.float32, scale=1.5, offset=-0.3, outliers=1e-3, outlier_scale=8.0)
    # Up-projection activations are heavy-tailed: a few outliers set each token's scale (the case
    # per-token scales exist for). One token's up row is all zero (h = 0: the 1e-8 floor).
    up = randn(gen, (t, n), torch.float32, scale=1.0, offset=0.05, outliers=2e-3, outlier_scale=30.0)
    up[int(randint(gen, (1,), 0, t).item())] = 0.0
    return (torch.cat((gate, up), dim=-1).to(dtype),)


def flops(shape):
    return 10.0 * shape["tokens"] * shape["N"]  # SiLU (~5), product, |.| max, divide, round/clamp


def bytes_moved(shape, dtype):
    t, n = shape["tokens"], shape["N"]
    return float(nbytes((t, 2 * n), dtype) + nbytes((t, n), torch.int8) + 4 * t)


TASK = Task(
    name="silu_mul_quant_int8",
    category="fusion",
    description="W8A8 SwiGLU activation: h = silu(x[:, :N]) * x[:, N:] in float32, then per-token symmetric int8 (round half to even, clamp +/-127); returns int8 q [T, N] and float32 scales [T]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"tokens": 64, "N": 1024}, "small"),
        # One token more than a warp multiple and an odd intermediate size.
        Shape("awkward", {"tokens": 33, "N": 1409}, "awkward"),
        # Llama-3-8B MLP (intermediate 14336) over 8192 tokens: 896 MiB of float32 gate_up read.
        Shape("large", {"tokens": 8192, "N": 14336}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "per-token symmetric int8 of h = silu(gate)*up (float32, unrounded): scale = max(amax,1e-8)/127 fp32 within rtol 1e-6 "
        "of exact; q = clamp(round_half_even(h/scale),-127,127) exact vs exact arithmetic, +/-1 only within 1e-3 of a .5 tie")),
    flops=flops,
    bytes=bytes_moved,
)
