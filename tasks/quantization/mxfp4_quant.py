"""MXFP4 (E2M1) quantization with packing, OCP Microscaling Formats (MX) specification v1.0
(the weight format of gpt-oss and FP4 tensor-core GEMMs).

Contract, written out:
  * input: x [R, C] in the task dtype, C divisible by 32 (the reference raises otherwise);
    arithmetic in float32 (lower precisions widened first, exactly)
  * blocks: 32 consecutive elements along the last dim, x[r, 32j : 32j+32]
  * shared scale (MX v1.0, section 6.3): X = 2^(floor(log2(amax)) - emax_elem), amax = max |x|
    over the block, emax_elem = 2 for E2M1 (largest value 6 = 1.5 * 2^2). floor(log2(amax)) is
    the exact binary exponent of amax; the exponent is clamped below at -127, so an all-zero
    block gets 2^-127. Scale output: E8M0 code = exponent + 127, uint8 [R, C/32].
  * elements: v = x / X (exact: a power-of-two scale), |v| < 8; magnitude rounded to the nearest
    E2M1 value {0, 0.5, 1, 1.5, 2, 3, 4, 6}, ties to the even code (0.25 -> 0, 0.75 -> 1,
    1.25 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4), saturating at 6 (v >= 6 -> 6, the spec's
    clamp to max normal). Ties are exact here (v is exact), and they do occur.
  * E2M1 code: sign bit 3 (set for negative x, also when the magnitude rounds to 0), exponent
    bits 2..1 (bias 1), mantissa bit 0; i.e. magnitude codes 0..7 for the values above
  * packing: q[r, i] = code(x[r, 2i]) | (code(x[r, 2i+1]) << 4): element 2i in the low nibble,
    element 2i+1 in the high nibble (the order of torch.float4_e2m1fn_x2), uint8 [R, C/2]
  * comparison: scale codes exact; each unpacked element exact by value (+0 and -0, codes 0x0
    and 0x8, are the same value)
A float kernel fails (uint8 outputs, exact); so do round-half-away ties, the other nibble
order, and E8M0 scales rounded to nearest instead of floored.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom, compare_exact
from mkbench.taskkit import mx_block_scaled, mx_shared_exponent

BLOCK = 32
EMAX_ELEM = 2
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
# Midpoints between consecutive magnitudes; at midpoint j (between codes j and j+1) the tie goes to
# the even code, i.e. up when j is odd.
_MIDPOINTS = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)


def _e2m1_codes(v):
    a = v.abs()
    code = torch.zeros(v.shape, dtype=torch.int32, device=v.device)
    for j, m in enumerate(_MIDPOINTS):
        code += (a > m).to(torch.int32)
        if j % 2 == 1:
            code += (a == m).to(torch.int32)
    return code | (torch.signbit(v).to(torch.int32) << 3)  # saturates: a >= 5 gives 7 (6.0)


def reference(x):
    r, c = x.shape
    if c % BLOCK:
        raise ValueError(f"mxfp4_quant: last dim {c} is not divisible by {BLOCK}")
    xb = x.to(torch.float32).reshape(r, c // BLOCK, BLOCK)
    exp = mx_shared_exponent(xb, EMAX_ELEM)
    v = torch.ldexp(xb, (-exp).to(torch.float32)[:, :, None]).reshape(r, c)
    code = _e2m1_codes(v)
    q = (code[:, 0::2] | (code[:, 1::2] << 4)).to(torch.uint8)
    return q, (exp + 127).to(torch.uint8)


def _unpacked_values(q):
    qi = q.to(torch.int32)
    codes = torch.stack((qi & 0xF, qi >> 4), dim=-1).reshape(q.shape[0], -1)
    table = torch.tensor(E2M1_VALUES, dtype=torch.float64, device=q.device)
    mag = table[codes & 7]
    return torch.where((codes & 8) != 0, -mag, mag)


def check(ctx):
    q_ref, s_ref = ctx.reference()
    q, s = ctx.outputs
    res = compare_exact(s, s_ref, "scale (E8M0 code)")
    if not res.ok:
        return res
    a, b = _unpacked_values(q), _unpacked_values(q_ref)
    bad = a != b
    if bool(bad.any()):
        i = int(torch.nonzero(bad.flatten())[0])
        return CheckResult(False, f"q: {int(bad.sum())}/{a.numel()} unpacked elements differ (first at element {i}: got "
                                  f"{float(a.flatten()[i]):g}, expected {float(b.flatten()[i]):g}; byte 0x"
                                  f"{int(q.flatten()[i // 2]):02x} vs 0x{int(q_ref.flatten()[i // 2]):02x})")
    return CheckResult(True, "", 0.0, 0.0)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    # Heavy-tailed values, block magnitudes spread over 2^-12 .. 2^12; the first block of row 0
    # is all zeros. Every tenth value is snapped to an exact E2M1 midpoint of its block (ties).
    x = mx_block_scaled(gen, r, c, BLOCK)
    xb = x.reshape(r, c // BLOCK, BLOCK)
    exp = mx_shared_exponent(xb, EMAX_ELEM)
    mids = torch.tensor(_MIDPOINTS, device=gen.device)
    pick = mids[torch.randint(0, 7, (r, c // BLOCK, BLOCK), generator=gen, device=gen.device)]
    tie = torch.ldexp(pick * torch.sign(xb), exp.to(torch.float32)[:, :, None])
    snap = (torch.arange(c, device=gen.device) % 10 == 3).reshape(c // BLOCK, BLOCK)
    # Snap only below the block maximum, so the shared exponent does not change.
    snap = snap & (tie.abs() < xb.abs().amax(dim=-1, keepdim=True))
    xb = torch.where(snap, tie, xb)
    return (xb.reshape(r, c).to(dtype),)


def flops(shape):
    return 6.0 * shape["rows"] * shape["cols"]


def bytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return float(r * c * torch.empty((), dtype=dtype).element_size() + r * c // 2 + r * (c // BLOCK))


TASK = Task(
    name="mxfp4_quant",
    category="quantization",
    description="OCP MX v1.0 MXFP4 quantization: blocks of 32, shared E8M0 scale 2^(floor(log2 amax) - 2), saturating "
                "RNE E2M1 elements packed two per byte (element 2i in the low nibble); returns packed uint8 and E8M0 scales",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 7, "cols": 1184}, "awkward"),
        # 512 MiB of float32 read, 64 MiB of packed codes and 4 MiB of scales written.
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "MXFP4 (OCP MX v1.0): per 32-block, E8M0 code = clamp(floor(log2 amax) - 2, -127, 127) + 127 (zero block: 0), exact; "
        "elements e2m1 of x/2^exp, RNE ties to even code, saturating at 6, sign bit 3; packed element 2i low nibble, 2i+1 "
        "high nibble; exact by value (+0 == -0)")),
    flops=flops,
    bytes=bytes_moved,
)
