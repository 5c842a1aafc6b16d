"""MXFP8 (E4M3) quantization, OCP Microscaling Formats (MX) specification v1.0.

Contract, written out:
  * input: x [R, C] in the task dtype, C divisible by 32 (the reference raises otherwise);
    arithmetic in float32 (lower precisions widened first, exactly)
  * blocks: 32 consecutive elements along the last dim, x[r, 32j : 32j+32]
  * shared scale (MX v1.0, section 6.3): X = 2^(floor(log2(amax)) - emax_elem), amax = max |x|
    over the block, emax_elem = 8 for E4M3 (its largest power of two is 2^8 = 256).
    floor(log2(amax)) is the exact binary exponent of amax (no rounding of a logarithm). The
    exponent is clamped below at -127 (the smallest E8M0 scale); an all-zero block therefore
    gets 2^-127. (With float32 inputs it cannot exceed 127.)
  * scale output: E8M0 code = exponent + 127 as uint8 [R, C/32] (0xFF, NaN, never occurs)
  * elements: q = e4m3(x / X): round to nearest, ties to even mantissa, saturating to +/-448.
    Since amax / X lies in [256, 512), values above 448 occur and saturate (the spec's
    clamp-to-max-normal); x / X is exact (a power-of-two scale), so there is no tie ambiguity.
  * element output: raw E4M3 ("e4m3fn") bit patterns as uint8 [R, C] (sign bit 7, exponent
    bits 6..3 bias 7, mantissa bits 2..0; NaN codes 0x7F / 0xFF must not appear)
  * comparison: scale codes exact; elements exact by value (decoded; +0 and -0 are equal)
A float kernel fails (uint8 outputs, exact); so does rounding the scale to nearest (instead of
the floor of the exponent) or per-tensor / per-row scaling.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom, compare_exact
from mkbench.taskkit import mx_block_scaled, mx_shared_exponent

BLOCK = 32
EMAX_ELEM = 8
E4M3_MAX = 448.0


def reference(x):
    r, c = x.shape
    if c % BLOCK:
        raise ValueError(f"mxfp8_quant: last dim {c} is not divisible by {BLOCK}")
    xb = x.to(torch.float32).reshape(r, c // BLOCK, BLOCK)
    exp = mx_shared_exponent(xb, EMAX_ELEM)
    v = torch.ldexp(xb, (-exp).to(torch.float32)[:, :, None])  # exact: a power-of-two scale
    q = v.clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn).view(torch.uint8).reshape(r, c)
    return q, (exp + 127).to(torch.uint8)


def check(ctx):
    q_ref, s_ref = ctx.reference()
    q, s = ctx.outputs
    res = compare_exact(s, s_ref, "scale (E8M0 code)")
    if not res.ok:
        return res
    a = q.view(torch.float8_e4m3fn).to(torch.float64)
    b = q_ref.view(torch.float8_e4m3fn).to(torch.float64)
    bad = ~(a == b)
    if bool(bad.any()):
        i = int(torch.nonzero(bad.flatten())[0])
        return CheckResult(False, f"q: {int(bad.sum())}/{q.numel()} elements differ (first at flat index {i}: got "
                                  f"{float(a.flatten()[i]):.6g} (0x{int(q.flatten()[i]):02x}), expected "
                                  f"{float(b.flatten()[i]):.6g} (0x{int(q_ref.flatten()[i]):02x}))")
    return CheckResult(True, "", 0.0, 0.0)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    # Heavy-tailed values with block magnitudes spread over 2^-12 .. 2^12, so shared exponents
    # differ from block to block; the first block of row 0 is all zeros (scale 2^-127).
    x = mx_block_scaled(gen, r, c, BLOCK)
    return (x.to(dtype),)


def flops(shape):
    return 4.0 * shape["rows"] * shape["cols"]


def bytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return float(r * c * torch.empty((), dtype=dtype).element_size() + r * c + r * (c // BLOCK))


TASK = Task(
    name="mxfp8_quant",
    category="quantization",
    description="OCP MX v1.0 MXFP8 quantization: blocks of 32 along the last dim, shared E8M0 scale "
                "2^(floor(log2 amax) - 8), saturating RNE E4M3 elements; returns uint8 E4M3 codes and uint8 E8M0 scales",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        # odd row count, 37 blocks per row
        Shape("awkward", {"rows": 7, "cols": 1184}, "awkward"),
        # 512 MiB of float32 read, 128 MiB of codes and 4 MiB of scales written.
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "MXFP8 (OCP MX v1.0): per 32-block along the last dim, E8M0 code = clamp(floor(log2 amax) - 8, -127, 127) + 127 "
        "(all-zero block: 0), exact; q = e4m3_rne(clamp(x/2^exp, -448, 448)) as uint8 bit patterns, exact by value (+0 == -0)")),
    flops=flops,
    bytes=bytes_moved,
)
