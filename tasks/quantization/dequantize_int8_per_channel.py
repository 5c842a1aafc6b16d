"""Per-channel (per-output-row) int8 dequantization, the weight side of W8A16 inference.

Contract, written out:
  * inputs: q int8 [N, K] (values in [-127, 127]), scale float32 [N] (positive), and out_dtype,
    a str naming the task dtype, which selects the output dtype (float32, float16 or bfloat16)
  * granularity: one scale per row n; symmetric, zero point 0
  * value: x[n, k] = q[n, k] * scale[n], returned as out_dtype [N, K]
  * arithmetic: the product is formed in float32 (exact operands: |q| <= 127 is exact in every
    float dtype) and rounded to out_dtype; the reference rounds twice (to float32, then to out_dtype)
  * comparison, derived from the scale: with the exact value e = q * scale (float64),
    |x - e| <= (u_out + 2^-24) * |e| per element, u_out = 2^-24 (float32), 2^-11 (float16),
    2^-8 (bfloat16): one round-to-nearest to the output dtype plus one float32 rounding of the
    product. No absolute slack: q = 0 must give exactly 0. NaN/Inf and float16 subnormals cannot occur
    (scales lie in [e^-9, e^-2], so every nonzero |e| is in [1.2e-4, 17.2]).
A kernel that rounds the scale to bfloat16 first (bfloat16 compute) fails the float32 dtype.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.task import DTYPES
from mkbench.taskkit import itemsize, nbytes, randint, uniform

UNIT_ROUNDOFF = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def reference(q, scale, out_dtype):
    return (q.to(torch.float32) * scale.to(torch.float32)[:, None]).to(DTYPES[out_dtype])


def check(ctx):
    q, scale, out_dtype = ctx.inputs
    (x,) = ctx.outputs
    exact = q.to(torch.float64) * scale.to(torch.float64)[:, None]
    rtol = UNIT_ROUNDOFF[DTYPES[out_dtype]] + 2.0 ** -24
    xd = x.to(torch.float64)
    err = (xd - exact).abs()
    bound = rtol * exact.abs()
    bad = ~(err <= bound)  # NaN in x counts as bad
    max_abs = float(err.max()) if err.numel() else 0.0
    rel = float((err / exact.abs().clamp_min(1e-300)).max()) if err.numel() else 0.0
    if bool(bad.any()):
        n = int(bad.sum())
        i = int(torch.nonzero(bad.flatten())[0])
        return CheckResult(False, f"x: {n}/{x.numel()} values outside rtol {rtol:.3g} of q*scale (first at flat index {i}: "
                                  f"got {float(xd.flatten()[i]):.8g}, expected {float(exact.flatten()[i]):.8g})", max_abs, rel)
    return CheckResult(True, "", max_abs, rel)


def make_inputs(shape, dtype, gen):
    n, k = shape["N"], shape["K"]
    q = randint(gen, (n, k), -127, 128, torch.int8)
    # Scales spread over three decades (log-uniform), as per-channel weight scales are.
    scale = torch.exp(uniform(gen, (n,), torch.float32, -9.0, -2.0)).to(torch.float32)
    return (q, scale, [k for k, v in DTYPES.items() if v == dtype][0])


def flops(shape):
    return 1.0 * shape["N"] * shape["K"]


def bytes_moved(shape, dtype):
    n, k = shape["N"], shape["K"]
    return nbytes((n, k), torch.int8) + 4 * n + n * k * itemsize(dtype)


TASK = Task(
    name="dequantize_int8_per_channel",
    category="quantization",
    description="per-channel int8 dequantization x = q * scale[:, None] to the task dtype (fp32 scales)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 64, "K": 1024}, "small"),
        Shape("awkward", {"N": 7, "K": 4099}, "awkward"),
        Shape("large", {"N": 16384, "K": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "per-channel int8 dequant: x = q*scale[n] in the task dtype; |x - q*scale| <= (u_out + 2^-24)*|q*scale| "
        "per element (one rounding to the output dtype plus one float32 rounding), no absolute slack")),
    flops=flops,
    bytes=bytes_moved,
)
