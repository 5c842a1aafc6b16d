"""Fake quantization (quantize then dequantize in one pass), per tensor, int8 range: the op that
quantization-aware training inserts (torch.fake_quantize_per_tensor_affine semantics, with the
rounding pinned down).

Contract, written out:
  * inputs: x [R, C] in the task dtype; scale, a float32 0-dim tensor (positive); zero_point, a
    Python int in [-128, 127]; quantization range [quant_min, quant_max] = [-128, 127]
  * arithmetic: float32 (x widened first)
  * q = clamp(round_half_to_even(x / scale) + zero_point, -128, 127)   (an integer)
  * y = (q - zero_point) * scale, one float32 product, returned in the dtype of x, shape of x
  * comparison: with e = (q - zero_point) * scale in float64, |y - e| <= (u_out + 2^-24) * |e|
    per element (u_out = 2^-24 float32, 2^-8 bfloat16: one rounding to the output dtype and one
    float32 rounding of the product; no absolute slack, q == zero_point must give exactly 0);
    where x / scale lies within 1e-3 of a .5 tie, the value of the neighbouring integer on the
    other side of the tie (q +/- 1, clamped) is accepted as well (torch's own kernel multiplies by
    1/scale and lands there)
  * the scale and zero point put about 0.5% of the values outside the range: both clamps fire
A kernel that skips the clamp, rounds half away from zero, or returns x fails.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom, near_tie
from mkbench.taskkit import randn, uniform

QMIN, QMAX = -128, 127
TIE_WINDOW = 1e-3
UNIT_ROUNDOFF = {torch.float32: 2.0 ** -24, torch.bfloat16: 2.0 ** -8}


def reference(x, scale, zero_point):
    s = scale.to(torch.float32)
    q = (torch.round(x.to(torch.float32) / s) + zero_point).clamp(QMIN, QMAX)
    return ((q - zero_point) * s).to(x.dtype)


def check(ctx):
    x, scale, zero_point = ctx.inputs
    (y,) = ctx.outputs
    s = scale.to(torch.float32)
    v = x.to(torch.float32) / s
    q = (torch.round(v) + zero_point).clamp(QMIN, QMAX)
    # the other side of a tie: round the other way
    q_alt = (torch.where(torch.round(v) > v, torch.floor(v), torch.ceil(v)) + zero_point).clamp(QMIN, QMAX)
    s64 = float(s)
    rtol = UNIT_ROUNDOFF[x.dtype] + 2.0 ** -24
    yd = y.to(torch.float64)
    e = (q.to(torch.float64) - zero_point) * s64
    e_alt = (q_alt.to(torch.float64) - zero_point) * s64
    ok = (yd - e).abs() <= rtol * e.abs()
    ok_alt = near_tie(v, TIE_WINDOW) & ((yd - e_alt).abs() <= rtol * e_alt.abs())
    bad = ~(ok | ok_alt)
    err = (yd - e).abs()
    max_abs = float(torch.nan_to_num(err, nan=float("inf")).max()) if err.numel() else 0.0
    if bool(bad.any()):
        i = int(torch.nonzero(bad.flatten())[0])
        return CheckResult(False, f"y: {int(bad.sum())}/{y.numel()} values differ from (q - zp) * scale (first at flat index {i}: "
                                  f"got {float(yd.flatten()[i]):.8g}, expected {float(e.flatten()[i]):.8g}, x/scale = "
                                  f"{float(v.flatten()[i]):.4f})", max_abs, None)
    return CheckResult(True, "", max_abs, 0.0)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    x = randn(gen, (r, c), dtype, scale=1.5, offset=0.4, outliers=1e-3, outlier_scale=10.0)
    # A calibrated range of offset +/- 3 sigma (as an observer would give): [-4.1, 4.9] widened
    # or narrowed by up to 10%, so ~0.3% Gaussian tails and the outliers clamp on both sides.
    scale = (uniform(gen, (), torch.float32, 0.9, 1.1) * (9.0 / 255.0)).to(torch.float32)
    zero_point = int(round(-128 + 4.1 / float(scale)))
    return (x, scale, zero_point)


def flops(shape):
    return 6.0 * shape["rows"] * shape["cols"]


def bytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return float(2 * r * c * torch.empty((), dtype=dtype).element_size() + 4)


TASK = Task(
    name="fake_quant_int8",
    category="quantization",
    description="per-tensor int8 fake quantization y = (clamp(round_half_even(x/scale) + zp, -128, 127) - zp) * scale "
                "with a float32 scale tensor and an int zero point, output in the dtype of x",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 7, "cols": 4099}, "awkward"),
        # 512 MiB read and 512 MiB written in float32.
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "per-tensor int8 fake quant: q = clamp(round_half_even(x/scale)+zp,-128,127), y = (q-zp)*scale in float32 then the "
        "dtype of x; |y - e| <= (u_out + 2^-24)|e| per element, the other side of a .5 tie accepted within 1e-3")),
    flops=flops,
    bytes=bytes_moved,
)
