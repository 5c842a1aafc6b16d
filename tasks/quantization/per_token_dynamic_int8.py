"""Dynamic per-token asymmetric int8 activation quantization with an integer zero point (the
"azp" scheme of W8A8 inference kernels, e.g. vLLM's dynamic_scaled_int8_azp_quant).

Contract, written out:
  * input: x [T, H] (tokens x hidden) in the task dtype; arithmetic in float32 (lower
    precisions widened first)
  * granularity: one scale and one zero point per token (row), computed on the fly
  * range: lo[t] = min_h x[t, h], hi[t] = max_h x[t, h] (not widened to include 0)
  * scale[t] = max(hi - lo, 1e-8) / 255 in float32; float32 [T]
  * azp[t] = round_half_to_even(-128 - lo / scale[t]); int32 [T] (lo maps to -128, hi to 127)
  * q[t, h] = clamp(round_half_to_even(x[t, h] / scale[t]) + azp[t], -128, 127) as int8 [T, H]
  * comparison: scale within rtol 1e-6 (a float32 subtraction and division); azp exact, except
    that a difference of exactly 1 is accepted where -128 - lo / scale lies within 1e-3 of a .5
    tie; q exact against clamp(round_half_to_even(x / scale) + azp, -128, 127) computed with the
    candidate's own azp, except that a difference of exactly 1 is accepted where x / scale lies
    within 1e-3 of a .5 tie (a kernel multiplying by 1/scale lands on the other side of a tie)
A float kernel fails (q int8 and azp int32, both exact); so does a symmetric or per-tensor
scheme.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom, compare_rounded
from mkbench.taskkit import nbytes, randn

TIE_WINDOW = 1e-3


def reference(x):
    x32 = x.to(torch.float32)
    lo, hi = x32.amin(dim=-1), x32.amax(dim=-1)
    scale = (hi - lo).clamp_min(1e-8) / 255.0
    azp = torch.round(-128.0 - lo / scale).to(torch.int32)
    q = (torch.round(x32 / scale[:, None]) + azp[:, None]).clamp(-128, 127).to(torch.int8)
    return q, scale, azp


def check(ctx):
    _, s_ref, azp_ref = ctx.reference()
    q, s, azp = ctx.outputs
    rel = ((s.double() - s_ref.double()).abs() / s_ref.double()).max().item() if s.numel() else 0.0
    if not rel <= 1e-6:
        return CheckResult(False, f"scale: max relative error {rel:.3g} > 1e-6", None, rel)
    x32 = ctx.inputs[0].to(torch.float32)
    lo = x32.amin(dim=-1)
    res = compare_rounded(azp, azp_ref, -128.0 - lo / s_ref, TIE_WINDOW, name="azp")
    if not res.ok:
        return CheckResult(False, res.message, res.max_abs_err, rel)
    v = x32 / s_ref[:, None]
    expected = (torch.round(v) + azp.to(torch.float32)[:, None]).clamp(-128, 127).to(torch.int32)
    res_q = compare_rounded(q, expected, v, TIE_WINDOW)
    return CheckResult(res_q.ok, res_q.message, max(res.max_abs_err or 0.0, res_q.max_abs_err or 0.0), rel)


def make_inputs(shape, dtype, gen):
    t, h = shape["tokens"], shape["hidden"]
    # LLM-like activations: a per-token offset and spread, heavy tails and a few outlier
    # channels, so the token ranges are asymmetric and the zero points differ per token.
    base = randn(gen, (t, h), torch.float32, scale=1.0, outliers=2e-3, outlier_scale=30.0)
    tok_scale = torch.exp(randn(gen, (t, 1), torch.float32, scale=0.5))
    tok_offset = randn(gen, (t, 1), torch.float32, scale=0.5)
    return ((base * tok_scale + tok_offset).to(dtype),)


def flops(shape):
    return 5.0 * shape["tokens"] * shape["hidden"]


def bytes_moved(shape, dtype):
    t, h = shape["tokens"], shape["hidden"]
    return nbytes((t, h), dtype) + nbytes((t, h), torch.int8) + 8 * t


TASK = Task(
    name="per_token_dynamic_int8",
    category="quantization",
    description="dynamic per-token asymmetric int8 quantization: scale = (max - min)/255, int32 zero point "
                "azp = round(-128 - min/scale), q = clamp(round(x/scale) + azp, -128, 127); returns q, scale, azp",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"tokens": 64, "hidden": 1024}, "small"),
        Shape("awkward", {"tokens": 7, "hidden": 4099}, "awkward"),
        # 16384 tokens of Llama-3-70B's hidden size 8192: 512 MiB of float32 read.
        Shape("large", {"tokens": 16384, "hidden": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "per-token asymmetric int8: scale = max(max-min,1e-8)/255 fp32 (rtol 1e-6); azp = round_half_even(-128 - min/scale) "
        "int32; q = clamp(round_half_even(x/scale) + azp, -128, 127) int8; azp and q exact, +/-1 only within 1e-3 of a .5 tie")),
    flops=flops,
    bytes=bytes_moved,
)
