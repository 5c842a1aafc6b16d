"""Per-row (per-token) symmetric int8 quantization, the activation side of W8A8 inference.

Contract, written out:
  * granularity: one scale per row (last dim reduced); symmetric, zero point 0
  * arithmetic: float32 (inputs of lower precision are widened first)
  * scale_r = max(amax_r, 1e-8) / 127, amax_r = max |x[r, :]|; returned as float32 [R]
  * q = clamp(round_half_to_even(x / scale_r), -127, 127) as int8 [R, C] (-128 unused)
  * comparison: scale within rtol 1e-6 (one float32 rounding of the division);
    q exact, except that a difference of exactly 1 is accepted where x / scale_r lies within
    1e-3 of a .5 tie (a candidate that multiplies by 1/scale lands on the other side of a tie)
A float kernel fails: q must be int8 and exact.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom, compare_rounded
from mkbench.taskkit import nbytes, randn

TIE_WINDOW = 1e-3


def reference(x):
    x32 = x.to(torch.float32)
    scale = x32.abs().amax(dim=-1).clamp_min(1e-8) / 127.0
    q = torch.round(x32 / scale[:, None]).clamp(-127, 127).to(torch.int8)
    return q, scale


def check(ctx):
    q_ref, s_ref = ctx.reference()
    q, s = ctx.outputs
    rel = ((s.double() - s_ref.double()).abs() / s_ref.double()).max().item() if s.numel() else 0.0
    if rel > 1e-6:
        return CheckResult(False, f"scale: max relative error {rel:.3g} > 1e-6", None, rel)
    v = ctx.inputs[0].to(torch.float32) / s_ref[:, None]
    res = compare_rounded(q, q_ref, v, TIE_WINDOW)
    return CheckResult(res.ok, res.message, res.max_abs_err, rel)


def make_inputs(shape, dtype, gen):
    # Heavy-tailed rows: a few outliers set each row's scale, as in LLM activations.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=2.0, offset=0.3, outliers=2e-3, outlier_scale=30.0),)


def flops(shape):
    return 4.0 * shape["rows"] * shape["cols"]


def bytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return nbytes((r, c), dtype) + nbytes((r, c), torch.int8) + 4 * r


TASK = Task(
    name="quantize_int8_rowwise",
    category="quantization",
    description="per-row symmetric int8 quantization (round half to even, clamp to +/-127) returning q and fp32 scales",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 7, "cols": 4099}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "per-row symmetric int8: scale = max(amax,1e-8)/127 in fp32 (rtol 1e-6); q = clamp(round_half_even(x/scale),-127,127) "
        "exact, +/-1 allowed only within 1e-3 of a .5 tie")),
    flops=flops,
    bytes=bytes_moved,
)
