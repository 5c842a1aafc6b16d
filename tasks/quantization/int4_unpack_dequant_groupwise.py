"""Unpack and dequantize AWQ / GPTQ style 4-bit weights: unsigned 4-bit codes packed two per
byte, one scale and one zero point per group of 128 input features.

Contract, written out:
  * inputs: qweight uint8 [N, K/2], codes q in 0..15, q[n, 2i] = qweight[n, i] & 0xF (low nibble),
    q[n, 2i+1] = qweight[n, i] >> 4 (high nibble); scales [N, K/128] in the task dtype (the model
    dtype, as AWQ/GPTQ checkpoints store them), positive; zeros uint8 [N, K/128], values 0..15
    (one per byte, unpacked); K divisible by 128 (the reference raises otherwise)
  * value: w[n, k] = (q[n, k] - zeros[n, k // 128]) * scales[n, k // 128]: the integer difference
    first (exact), then one product, returned in the task dtype [N, K]
  * comparison, derived from the scale: with e the exact value (float64),
    |w - e| <= (u_out + 2^-24) * |e| per element, u_out = 2^-24 (float32), 2^-11 (float16),
    2^-8 (bfloat16): one rounding to the output dtype plus one float32 rounding of the product.
    No absolute slack: q == zero must give exactly 0. Group scales are (max - min) / 15 of 128
    weights with standard deviation 0.02 (about 7e-3), so every nonzero |w| is far above the
    smallest normal float16 (6.1e-5) and a relative bound holds.
    A kernel that forms q * s - z * s with z * s rounded to 16 bits (an FMA shortcut) rounds twice
    and can fail where q is close to the zero point: the contract is (q - z) * s.
A kernel that assumes a zero point of 8 (symmetric), swaps the nibble order, or indexes the
groups wrongly fails.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import itemsize, randn

GROUP = 128
UNIT_ROUNDOFF = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def _exact(qweight, scales, zeros):
    n = qweight.shape[0]
    qi = qweight.to(torch.int32)
    q = torch.stack((qi & 0xF, qi >> 4), dim=-1).reshape(n, -1)
    k = q.shape[1]
    if k % GROUP:
        raise ValueError(f"int4_unpack_dequant_groupwise: K = {k} is not divisible by {GROUP}")
    z = zeros.to(torch.int32).repeat_interleave(GROUP, dim=1)
    s = scales.to(torch.float64).repeat_interleave(GROUP, dim=1)
    return (q - z).to(torch.float64) * s


def reference(qweight, scales, zeros):
    return _exact(qweight, scales, zeros).to(torch.float32).to(scales.dtype)


def check(ctx):
    qweight, scales, zeros = ctx.inputs
    (w,) = ctx.outputs
    exact = _exact(qweight, scales, zeros)
    rtol = UNIT_ROUNDOFF[scales.dtype] + 2.0 ** -24
    wd = w.to(torch.float64)
    err = (wd - exact).abs()
    bad = ~(err <= rtol * exact.abs())
    max_abs = float(err.max()) if err.numel() else 0.0
    rel = float((err / exact.abs().clamp_min(1e-300)).max()) if err.numel() else 0.0
    if bool(bad.any()):
        n = int(bad.sum())
        i = int(torch.nonzero(bad.flatten())[0])
        return CheckResult(False, f"w: {n}/{w.numel()} values outside rtol {rtol:.3g} of (q - zero) * scale (first at flat index "
                                  f"{i}: got {float(wd.flatten()[i]):.8g}, expected {float(exact.flatten()[i]):.8g})", max_abs, rel)
    return CheckResult(True, "", max_abs, rel)


def make_inputs(shape, dtype, gen):
    n, k = shape["N"], shape["K"]
    # A weight matrix quantized the AWQ way: per group, scale = (max - min) / 15 and
    # zero = round(-min / scale) in [0, 15]; outliers make group scales differ.
    wf = randn(gen, (n, k), torch.float32, scale=0.02, offset=0.002, outliers=1e-3, outlier_scale=6.0)
    g = wf.reshape(n, k // GROUP, GROUP)
    lo, hi = g.amin(-1).clamp(max=0.0), g.amax(-1).clamp(min=0.0)
    scale = ((hi - lo).clamp_min(1e-8) / 15.0).to(dtype)
    s32 = scale.to(torch.float32)
    zero = torch.round(-lo / s32).clamp(0, 15)
    q = (torch.round(g / s32[:, :, None]) + zero[:, :, None]).clamp(0, 15).to(torch.int32).reshape(n, k)
    qweight = (q[:, 0::2] | (q[:, 1::2] << 4)).to(torch.uint8)
    return (qweight, scale, zero.to(torch.uint8))


def flops(shape):
    return 2.0 * shape["N"] * shape["K"]


def bytes_moved(shape, dtype):
    n, k = shape["N"], shape["K"]
    groups = n * (k // GROUP)
    return float(n * k // 2 + groups * (itemsize(dtype) + 1) + n * k * itemsize(dtype))


TASK = Task(
    name="int4_unpack_dequant_groupwise",
    category="quantization",
    description="unpack uint4 codes (two per byte, low nibble first) and dequantize w = (q - zero) * scale with one "
                "scale and zero point per group of 128 along K (AWQ/GPTQ layout) to the task dtype",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 64, "K": 1024}, "small"),
        # odd N, 9 groups per row
        Shape("awkward", {"N": 7, "K": 1152}, "awkward"),
        # Llama-3-70B MLP gate projection (8192 -> 28672): 112 MiB of codes in, 448 MiB out in
        # 16-bit (896 MiB in float32).
        Shape("large", {"N": 28672, "K": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "uint4 AWQ/GPTQ dequant (low nibble = even k; groups of 128 along K): w = (q - zero)*scale in the task dtype, "
        "|w - e| <= (u_out + 2^-24)*|e| per element, no absolute slack")),
    flops=flops,
    bytes=bytes_moved,
)
