"""Group-wise symmetric int8 quantization along the last dim, group size 128 (as in
fine-grained / block-scaled int8 weight and activation formats).

Contract, written out:
  * input: x [R, C] in the task dtype; C must be divisible by 128 (the reference raises otherwise)
  * granularity: one scale per (row r, group g) of 128 consecutive elements x[r, 128g : 128g+128];
    symmetric, zero point 0
  * arithmetic: float32 (inputs of lower precision are widened first)
  * scale[r, g] = max(amax[r, g], 1e-8) / 127, amax = max |x| over the group; float32 [R, C/128]
  * q = clamp(round_half_to_even(x / scale[r, g]), -127, 127) as int8 [R, C] (-128 unused)
  * comparison: scale within rtol 1e-6 (one float32 rounding of the division);
    q exact, except that a difference of exactly 1 is accepted where x / scale lies within
    1e-3 of a .5 tie (a candidate that multiplies by 1/scale lands on the other side of a tie)
A float kernel fails: q must be int8 and exact.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom, compare_rounded
from mkbench.taskkit import nbytes, randn

GROUP = 128
TIE_WINDOW = 1e-3


def reference(x):
    r, c = x.shape
    if c % GROUP:
        raise ValueError(f"quantize_int8_groupwise: last dim {c} is not divisible by {GROUP}")
    xg = x.to(torch.float32).reshape(r, c // GROUP, GROUP)
    scale = xg.abs().amax(dim=-1).clamp_min(1e-8) / 127.0
    q = torch.round(xg / scale[:, :, None]).clamp(-127, 127).to(torch.int8).reshape(r, c)
    return q, scale


def check(ctx):
    q_ref, s_ref = ctx.reference()
    q, s = ctx.outputs
    rel = ((s.double() - s_ref.double()).abs() / s_ref.double()).max().item() if s.numel() else 0.0
    if not rel <= 1e-6:
        return CheckResult(False, f"scale: max relative error {rel:.3g} > 1e-6", None, rel)
    x32 = ctx.inputs[0].to(torch.float32)
    r, c = x32.shape
    v = (x32.reshape(r, c // GROUP, GROUP) / s_ref[:, :, None]).reshape(r, c)
    res = compare_rounded(q, q_ref, v, TIE_WINDOW)
    return CheckResult(res.ok, res.message, res.max_abs_err, rel)


def make_inputs(shape, dtype, gen):
    # Heavy-tailed values: with 2e-3 outliers about a fifth of the groups hold one, so group
    # scales vary by an order of magnitude within a row (the point of group-wise scales).
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=2.0, offset=0.3, outliers=2e-3, outlier_scale=30.0),)


def flops(shape):
    return 4.0 * shape["rows"] * shape["cols"]


def bytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return nbytes((r, c), dtype) + nbytes((r, c), torch.int8) + 4 * r * (c // GROUP)


TASK = Task(
    name="quantize_int8_groupwise",
    category="quantization",
    description="group-wise (128 along the last dim) symmetric int8 quantization returning q and fp32 scales [R, C/128]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        # odd row count, 9 groups per row (not a power of two)
        Shape("awkward", {"rows": 7, "cols": 1152}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "group-wise (128, last dim; C % 128 == 0) symmetric int8: scale[r,g] = max(amax,1e-8)/127 fp32 (rtol 1e-6); "
        "q = clamp(round_half_even(x/scale),-127,127) exact, +/-1 allowed only within 1e-3 of a .5 tie")),
    flops=flops,
    bytes=bytes_moved,
)
