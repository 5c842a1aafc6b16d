"""Per-output-channel symmetric int8 weight quantization, for a weight stored input-major
[K, N] (in_features x out_features, the layout of ``x @ W`` frameworks and of JAX/Flax Dense
kernels): the reduction runs down the columns, across rows, not along the contiguous dim.

Contract, written out:
  * input: W [K, N] in the task dtype; arithmetic in float32 (lower precisions widened first)
  * granularity: one scale per output channel n (column); symmetric, zero point 0
  * scale[n] = max(amax[n], 1e-8) / 127, amax[n] = max_k |W[k, n]|; float32 [N]
    (an all-zero column, present in the inputs, gets 1e-8 / 127 and all-zero codes)
  * q[k, n] = clamp(round_half_to_even(W[k, n] / scale[n]), -127, 127) as int8 [K, N] (-128 unused)
  * comparison: scale within rtol 1e-6 (one float32 rounding of the division); q exact, except
    that a difference of exactly 1 is accepted where W / scale lies within 1e-3 of a .5 tie
    (a kernel that multiplies by 1/scale lands on the other side of a tie)
A float kernel fails (q must be int8 and exact); so does a per-row (per-k) scale.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom, compare_rounded
from mkbench.taskkit import nbytes, randn, uniform

TIE_WINDOW = 1e-3


def reference(w):
    w32 = w.to(torch.float32)
    scale = w32.abs().amax(dim=0).clamp_min(1e-8) / 127.0
    q = torch.round(w32 / scale[None, :]).clamp(-127, 127).to(torch.int8)
    return q, scale


def check(ctx):
    q_ref, s_ref = ctx.reference()
    q, s = ctx.outputs
    rel = ((s.double() - s_ref.double()).abs() / s_ref.double()).max().item() if s.numel() else 0.0
    if not rel <= 1e-6:
        return CheckResult(False, f"scale: max relative error {rel:.3g} > 1e-6", None, rel)
    v = ctx.inputs[0].to(torch.float32) / s_ref[None, :]
    res = compare_rounded(q, q_ref, v, TIE_WINDOW)
    return CheckResult(res.ok, res.message, res.max_abs_err, rel)


def make_inputs(shape, dtype, gen):
    k, n = shape["K"], shape["N"]
    # Weights with per-channel magnitudes spread over a decade and a few outliers; column 1 is
    # all zeros (a pruned channel).
    col_scale = torch.exp(uniform(gen, (n,), torch.float32, -1.2, 1.2)) * 0.02
    w = randn(gen, (k, n), torch.float32, scale=1.0, offset=0.05, outliers=1e-3, outlier_scale=12.0) * col_scale
    if n > 1:
        w[:, 1] = 0.0
    return (w.to(dtype),)


def flops(shape):
    return 4.0 * shape["K"] * shape["N"]


def bytes_moved(shape, dtype):
    k, n = shape["K"], shape["N"]
    return nbytes((k, n), dtype) + nbytes((k, n), torch.int8) + 4 * n


TASK = Task(
    name="quantize_int8_per_channel_sym",
    category="quantization",
    description="per-output-channel symmetric int8 quantization of a [K, N] (input-major) weight: scale[n] = "
                "max|W[:, n]|/127 down each column, q = round half to even, clamp to +/-127",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"K": 1024, "N": 64}, "small"),
        Shape("awkward", {"K": 4099, "N": 7}, "awkward"),
        # Llama-3-70B MLP down projection stored input-major (28672 x 8192): 896 MiB in float32.
        Shape("large", {"K": 28672, "N": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "per-output-channel (columns of W [K, N]) symmetric int8: scale[n] = max(amax,1e-8)/127 fp32 (rtol 1e-6); "
        "q = clamp(round_half_even(W/scale),-127,127) exact, +/-1 allowed only within 1e-3 of a .5 tie")),
    flops=flops,
    bytes=bytes_moved,
)
