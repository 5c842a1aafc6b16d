"""Row-wise FP8 (E4M3) dequantization, the weight side of FP8 weight-only / row-wise scaled
inference (one scale per output channel).

Contract, written out:
  * inputs: q uint8 [R, C] holding raw OCP E4M3 ("e4m3fn") bit patterns (sign bit 7, exponent
    bits 6..3 with bias 7, mantissa bits 2..0; every code except the NaN codes 0x7F and 0xFF
    occurs, including +0 (0x00), -0 (0x80) and the subnormals 0x01..0x07 / 0x81..0x87),
    scale float32 [R] (positive), and out_dtype, a str naming the task dtype, which selects the
    output dtype (float32, float16 or bfloat16)
  * granularity: one scale per row r; symmetric, no zero point
  * value: x[r, c] = e4m3_value(q[r, c]) * scale[r], returned as out_dtype [R, C]
  * arithmetic: the product is formed in float32 (every E4M3 value is exact in float32, the
    product of a 4-bit and a 24-bit significand needs one rounding) and rounded to out_dtype
  * comparison, derived from the scale: with the exact value e = e4m3_value(q) * scale
    (float64), |x - e| <= (u_out + 2^-24) * |e| per element, u_out = 2^-24 (float32), 2^-11
    (float16), 2^-8 (bfloat16): one round-to-nearest to the output dtype plus one float32
    rounding of the product. No absolute slack: a zero code must give exactly 0 (either sign).
    Scales lie in [2^-5, 2], so every nonzero |e| is in [2^-14, 896]: normal in float16 (no
    subnormal outputs, where a relative bound would not hold) and far from overflow.
A kernel that reads the codes as integers, or as E5M2, fails; so does rounding the scale to
bfloat16 (bfloat16 compute) for the float32 dtype.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.task import DTYPES
from mkbench.taskkit import itemsize, randint, uniform

UNIT_ROUNDOFF = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def _values(q):
    return q.view(torch.float8_e4m3fn).to(torch.float32)


def reference(q, scale, out_dtype):
    return (_values(q) * scale.to(torch.float32)[:, None]).to(DTYPES[out_dtype])


def check(ctx):
    q, scale, out_dtype = ctx.inputs
    (x,) = ctx.outputs
    exact = _values(q).to(torch.float64) * scale.to(torch.float64)[:, None]
    rtol = UNIT_ROUNDOFF[DTYPES[out_dtype]] + 2.0 ** -24
    xd = x.to(torch.float64)
    err = (xd - exact).abs()
    bad = ~(err <= rtol * exact.abs())  # NaN in x counts as bad
    max_abs = float(err.max()) if err.numel() else 0.0
    rel = float((err / exact.abs().clamp_min(1e-300)).max()) if err.numel() else 0.0
    if bool(bad.any()):
        n = int(bad.sum())
        i = int(torch.nonzero(bad.flatten())[0])
        return CheckResult(False, f"x: {n}/{x.numel()} values outside rtol {rtol:.3g} of e4m3(q)*scale (first at flat index {i}: "
                                  f"code 0x{int(q.flatten()[i]):02x}, got {float(xd.flatten()[i]):.8g}, expected "
                                  f"{float(exact.flatten()[i]):.8g})", max_abs, rel)
    return CheckResult(True, "", max_abs, rel)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    # Every non-NaN code equally often: draw 0..253 and skip 0x7F and 0xFF.
    code = randint(gen, (r, c), 0, 254, torch.int32)
    code = code + (code >= 0x7F).to(torch.int32)
    q = code.to(torch.uint8)
    # Row scales log-uniform over six octaves [2^-5, 2].
    scale = torch.exp2(uniform(gen, (r,), torch.float32, -5.0, 1.0))
    return (q, scale, [k for k, v in DTYPES.items() if v == dtype][0])


def flops(shape):
    return 1.0 * shape["rows"] * shape["cols"]


def bytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return float(r * c + 4 * r + r * c * itemsize(dtype))


TASK = Task(
    name="dequantize_fp8_rowwise",
    category="quantization",
    description="row-wise FP8 E4M3 dequantization x = e4m3(q) * scale[:, None] from uint8 bit patterns and float32 row "
                "scales to the task dtype",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 7, "cols": 4099}, "awkward"),
        # 128 MiB of codes read, 512 MiB of float32 written (256 MiB in half precision).
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "row-wise FP8 E4M3 dequant: x = e4m3_value(q)*scale[r] in the task dtype; |x - e| <= (u_out + 2^-24)*|e| per element "
        "with e the exact product (one rounding to the output dtype plus one float32 rounding), no absolute slack")),
    flops=flops,
    bytes=bytes_moved,
)
