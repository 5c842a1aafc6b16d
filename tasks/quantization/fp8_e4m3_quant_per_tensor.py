"""Per-tensor dynamic FP8 (OCP E4M3, "e4m3fn") quantization, the activation/weight cast of FP8
inference and training recipes (e.g. torchao / Transformer Engine "tensorwise" scaling).

Contract, written out:
  * input: x [R, C] in the task dtype; arithmetic in float32 (lower precisions widened first)
  * granularity: one scale for the whole tensor, symmetric (no zero point)
  * scale = max(amax, 1e-12) / 448 in float32, amax = max |x|; returned as a float32 0-dim
    tensor (the dequantization scale: x ~ q * scale). 448 is the largest finite E4M3 value.
  * q = e4m3(clamp(x / scale, -448, 448)): round to nearest, ties to even mantissa, saturating
    (never NaN: the clamp comes first), subnormals kept (E4M3 has them down to 2^-9)
  * output encoding: q is returned as the raw E4M3 bit patterns in a uint8 tensor [R, C]
    (sign bit 7, exponent bits 6..3 with bias 7, mantissa bits 2..0; 0x7F / 0xFF are NaN and
    must never appear). A kernel that computes in FP8 returns ``q_fp8.view(torch.uint8)``.
  * comparison: scale within rtol 1e-6 (a float32 rounding or two: the division by 448 or a
    multiply by 1/448); q compared by value (decoded; +0 and -0 are the same value), exactly,
    except that a neighbouring E4M3 value (one code step) is accepted where x / scale lies within
    1e-3 of a step of the midpoint between the two (a kernel multiplying by 1/scale lands on the
    other side of such a near-tie).
A float kernel fails (the output must be uint8 bit patterns), and so does an integer-rounding
kernel (int8 codes are not E4M3 bit patterns).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import nbytes, randn

E4M3_MAX = 448.0
TIE_WINDOW = 1e-3


def reference(x):
    x32 = x.to(torch.float32)
    scale = x32.abs().amax().clamp_min(1e-12) / E4M3_MAX
    q = (x32 / scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn).view(torch.uint8)
    return q, scale


def decode_e4m3(bits):
    return bits.view(torch.float8_e4m3fn).to(torch.float64)


def e4m3_spacing(mag):
    """Distance from the E4M3 value of magnitude ``mag`` to the next larger one: 2^(e - 3) for
    mag in [2^e, 2^(e+1)), e >= -6 (the subnormals share the smallest normal's spacing). The
    exponent is read exactly (frexp), not as floor(log2(mag)): on an H200 the float64 log2 of a
    power of two fell below the integer, which halved the spacing at 8 and rejected mkbench's own
    reference on the tie x / scale = 8.5 (got 9, expected 8; reports/2026-11-27-main-job-pool)."""
    exponent = torch.frexp(mag.clamp_min(2.0 ** -6)).exponent - 1  # mag = m * 2^(exponent + 1), m in [0.5, 1)
    # looked up, not computed with exp2/pow (whose device versions are not exact either)
    steps = torch.tensor([2.0 ** (e - 3) for e in range(-6, 9)], dtype=torch.float64, device=mag.device)
    return steps[(exponent + 6).clamp(0, len(steps) - 1).long()]


def compare_e4m3(q, q_ref, v, window=TIE_WINDOW, name="q"):
    """Decoded values equal (+0 == -0), or one step apart where v is within window*step of
    their midpoint."""
    a, b = decode_e4m3(q), decode_e4m3(q_ref)
    differ = ~(a == b)  # NaN in the candidate differs
    if not bool(differ.any()):
        return CheckResult(True, "", 0.0)
    gap = (a - b).abs()
    step = e4m3_spacing(torch.minimum(a.abs(), b.abs()))
    near = (gap == step) & ((v.to(torch.float64) - (a + b) / 2).abs() <= window * step)
    bad = differ & ~near
    worst = float(torch.nan_to_num(gap, nan=float("inf")).max())
    if bool(bad.any()):
        i = int(torch.nonzero(bad.flatten())[0])
        return CheckResult(False, f"{name}: {int(bad.sum())}/{q.numel()} values differ (first at flat index {i}: got "
                                  f"{float(a.flatten()[i]):.6g} (0x{int(q.flatten()[i]):02x}), expected "
                                  f"{float(b.flatten()[i]):.6g} (0x{int(q_ref.flatten()[i]):02x}), x/scale = "
                                  f"{float(v.flatten()[i]):.6g})", worst)
    return CheckResult(True, "", worst)


def check(ctx):
    q_ref, s_ref = ctx.reference()
    q, s = ctx.outputs
    rel = abs(float(s.double()) - float(s_ref.double())) / float(s_ref.double())
    if not rel <= 1e-6:
        return CheckResult(False, f"scale: got {float(s):.9g}, expected {float(s_ref):.9g} (relative error {rel:.3g} > 1e-6)",
                           None, rel)
    v = ctx.inputs[0].to(torch.float64) / float(s_ref)
    res = compare_e4m3(q, q_ref, v)
    return CheckResult(res.ok, res.message, res.max_abs_err, rel)


def make_inputs(shape, dtype, gen):
    # Heavy-tailed values: rare outliers set the tensor's scale, so most values land in the low
    # binades and some in the E4M3 subnormal range (|x / scale| < 2^-6).
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=1.5, offset=0.2, outliers=1e-3, outlier_scale=40.0),)


def flops(shape):
    return 4.0 * shape["rows"] * shape["cols"]  # |x| and max, divide, clamp + convert


def bytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return float(nbytes((r, c), dtype) + r * c + 4)


TASK = Task(
    name="fp8_e4m3_quant_per_tensor",
    category="quantization",
    description="per-tensor dynamic FP8 E4M3 quantization: scale = amax/448, q = saturating RNE cast of x/scale, "
                "returned as uint8 E4M3 bit patterns and a float32 scale",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 7, "cols": 4099}, "awkward"),
        # 512 MiB of float32 read, 128 MiB of codes written.
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "per-tensor FP8 E4M3: scale = max(amax,1e-12)/448 fp32 (rtol 1e-6); q = e4m3_rne(clamp(x/scale,-448,448)) as uint8 "
        "bit patterns, compared by value (+0 == -0) exactly, a one-step neighbour allowed only within 1e-3 step of a midpoint")),
    flops=flops,
    bytes=bytes_moved,
)
