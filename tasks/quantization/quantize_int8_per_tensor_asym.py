"""Per-tensor asymmetric (affine) uint8 quantization with a zero point, as in PyTorch's quint8.

Contract, written out:
  * granularity: one scale and one zero point for the whole tensor; asymmetric
  * arithmetic: float32 (inputs of lower precision are widened first)
  * range: lo = min(min(x), 0), hi = max(max(x), 0) (the range always contains 0, so 0 is exact)
  * scale = max(hi - lo, 1e-8) / 255 in float32; returned as a float32 0-dim tensor
  * zero_point = clamp(round_half_to_even(-lo / scale), 0, 255); returned as an int32 0-dim tensor
  * q = clamp(round_half_to_even(x / scale) + zero_point, 0, 255) as uint8, same shape as x
  * comparison: scale within rtol 1e-6 (a few float32 roundings: the subtraction and the
    division, or a multiply by 1/255); zero_point exact, except that a difference of exactly 1
    is accepted where -lo / scale lies within 1e-3 of a .5 tie; q exact against
    clamp(round_half_to_even(x / scale) + zero_point, 0, 255) computed with the candidate's own
    zero_point, except that a difference of exactly 1 is accepted where x / scale lies within 1e-3
    of a .5 tie (a kernel that multiplies by 1/scale lands on the other side of a tie)
A float kernel fails: q must be uint8 and zero_point int32, both exact.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom, compare_rounded, near_tie
from mkbench.taskkit import nbytes, randn

TIE_WINDOW = 1e-3


def _range(x32):
    lo = torch.clamp(x32.min(), max=0.0)
    hi = torch.clamp(x32.max(), min=0.0)
    return lo, hi


def reference(x):
    x32 = x.to(torch.float32)
    lo, hi = _range(x32)
    scale = torch.clamp(hi - lo, min=1e-8) / 255.0
    zero_point = torch.round(-lo / scale).clamp(0, 255).to(torch.int32)
    q = (torch.round(x32 / scale) + zero_point).clamp(0, 255).to(torch.uint8)
    return q, scale, zero_point


def check(ctx):
    _, s_ref, zp_ref = ctx.reference()
    q, s, zp = ctx.outputs
    rel = abs(float(s.double()) - float(s_ref.double())) / float(s_ref.double())
    if not rel <= 1e-6:
        return CheckResult(False, f"scale: got {float(s):.9g}, expected {float(s_ref):.9g} (relative error {rel:.3g} > 1e-6)",
                           None, rel)
    x32 = ctx.inputs[0].to(torch.float32)
    lo, _ = _range(x32)
    zdiff = abs(int(zp) - int(zp_ref))
    if zdiff > 1 or (zdiff == 1 and not bool(near_tie(-lo / s_ref, TIE_WINDOW))):
        return CheckResult(False, f"zero_point: got {int(zp)}, expected {int(zp_ref)} (-min/scale = {float(-lo / s_ref):.4f})",
                           float(zdiff), rel)
    v = x32 / s_ref
    expected = (torch.round(v) + int(zp)).clamp(0, 255).to(torch.int32)
    res = compare_rounded(q, expected, v, TIE_WINDOW)
    return CheckResult(res.ok, res.message, max(float(zdiff), res.max_abs_err), rel)


def make_inputs(shape, dtype, gen):
    # Skewed heavy-tailed values (nonzero mean, rare large outliers): min and max are not
    # symmetric, so the zero point is far from 128 and matters.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=1.5, offset=0.8, outliers=1e-3, outlier_scale=25.0),)


def flops(shape):
    return 5.0 * shape["rows"] * shape["cols"]


def bytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return nbytes((r, c), dtype) + nbytes((r, c), torch.uint8) + 8


TASK = Task(
    name="quantize_int8_per_tensor_asym",
    category="quantization",
    description="per-tensor asymmetric uint8 quantization (scale=(max-min)/255, zero point, round half to even) returning q, scale, zero_point",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 7, "cols": 4099}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "per-tensor asymmetric uint8: lo=min(min x,0), hi=max(max x,0), scale=max(hi-lo,1e-8)/255 fp32 (rtol 1e-6); "
        "zero_point=clamp(round_half_even(-lo/scale),0,255) int32; q=clamp(round_half_even(x/scale)+zp,0,255) uint8; "
        "zp and q exact, +/-1 allowed only within 1e-3 of a .5 tie")),
    flops=flops,
    bytes=bytes_moved,
)
