"""FP8 (E4M3) scaled matmul with row-wise scales, the GEMM of FP8 inference (per-token activation
scales, per-channel weight scales, as in torch._scaled_mm with row-wise scaling).

Contract, written out:
  * inputs: A uint8 [M, K] and B uint8 [N, K], raw OCP E4M3 ("e4m3fn") bit patterns (sign bit 7,
    exponent bits 6..3 with bias 7, mantissa bits 2..0; never the NaN codes 0x7F / 0xFF);
    a_scale float32 [M] (one per row of A: per token), b_scale float32 [N] (one per row of B:
    per output channel). B is stored [N, K] (K-major, the layout FP8 tensor cores want).
  * value: y[m, n] = (sum_k a[m, k] * b[n, k]) * a_scale[m] * b_scale[n], a, b the E4M3 values
  * accumulation: float32 (or wider); output bfloat16 [M, N]
  * comparison, per element, against the exact value e = acc * a_scale * b_scale (float64; the
    float64 sum of E4M3 products is exact), with S = sum_k |a b| * a_scale * b_scale:
        |y - e| <= (2^-8 + 3 * 2^-24) * |e| + 1.01 * K * 2^-24 * S
    i.e. one rounding to bfloat16, up to three float32 roundings of the scaling, and the
    worst-case error of a float32 sum of K terms in any order (Higham's gamma_K ~ K u for
    recursive summation; blocked, pairwise and tensor-core orders are within it). A kernel that
    accumulates in bfloat16 or float16 fails (its error grows like 2^-8 S), as does one that
    reads the codes as integers or as E5M2, or applies the scales per tensor.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import randn

E4M3_MAX = 448.0


def _values(q):
    return q.view(torch.float8_e4m3fn).to(torch.float32)


def reference(a, a_scale, b, b_scale):
    # float32 accumulation (IEEE, no TF32: the harness turns TF32 off), as the contract allows.
    acc = _values(a) @ _values(b).T
    y = (acc * a_scale.to(torch.float32)[:, None]) * b_scale.to(torch.float32)[None, :]
    return y.to(torch.bfloat16)


def check(ctx):
    a, a_scale, b, b_scale = ctx.inputs
    (y,) = ctx.outputs
    k = a.shape[1]
    sc = a_scale.to(torch.float64)[:, None] * b_scale.to(torch.float64)[None, :]
    # float64 holds every partial sum of E4M3 products exactly (products span 2^-18 .. 2^17).
    exact = (_values(a).to(torch.float64) @ _values(b).to(torch.float64).T) * sc
    # sum |a b| only enters the bound: a float32 sum of non-negative terms is within K u of it
    # (1.01 covers that, even with TF32), at a fraction of a second float64 GEMM's cost.
    size = (_values(a).abs() @ _values(b).abs().T).to(torch.float64) * 1.01 * sc
    bound = (2.0 ** -8 + 3 * 2.0 ** -24) * exact.abs() + 1.01 * k * 2.0 ** -24 * size
    yd = y.to(torch.float64)
    err = (yd - exact).abs()
    bad = ~(err <= bound)  # NaN in y counts as bad
    max_abs = float(err.max()) if err.numel() else 0.0
    rel = float((err / exact.abs().clamp_min(1e-300)).max()) if err.numel() else 0.0
    if bool(bad.any()):
        n = int(bad.sum())
        i = int(torch.nonzero(bad.flatten())[0])
        return CheckResult(False, f"y: {n}/{y.numel()} values outside the bound (2^-8+3u)|e| + 1.01 K u sum|ab| (first at "
                                  f"flat index {i}: got {float(yd.flatten()[i]):.8g}, expected {float(exact.flatten()[i]):.8g}, "
                                  f"bound {float(bound.flatten()[i]):.3g})", max_abs, rel)
    return CheckResult(True, "", max_abs, rel)


def _quantize_rows(x):
    scale = x.abs().amax(dim=-1).clamp_min(1e-12) / E4M3_MAX
    q = (x / scale[:, None]).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn).view(torch.uint8)
    return q, scale


def make_inputs(shape, dtype, gen):
    m, k, n = shape["M"], shape["K"], shape["N"]
    # Activations heavy-tailed with outliers (per-token scales matter), weights Gaussian; both
    # quantized row-wise to E4M3 as an FP8 inference stack would.
    x = randn(gen, (m, k), torch.float32, scale=1.0, offset=0.1, outliers=2e-3, outlier_scale=20.0)
    w = randn(gen, (n, k), torch.float32, scale=0.02, offset=0.001)
    a, a_scale = _quantize_rows(x)
    b, b_scale = _quantize_rows(w)
    return (a, a_scale, b, b_scale)


def flops(shape):
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def bytes_moved(shape, dtype):
    m, k, n = shape["M"], shape["K"], shape["N"]
    return float(m * k + n * k + 4 * m + 4 * n + 2 * m * n)


TASK = Task(
    name="fp8_scaled_matmul",
    category="quantization",
    description="FP8 E4M3 GEMM y = (A @ B^T) * a_scale[:, None] * b_scale[None, :] with row-wise float32 scales, float32 "
                "accumulation and bfloat16 output; operands as uint8 E4M3 bit patterns, B [N, K]",
    math_peak="fp8",  # the products run on the FP8 tensor cores; the bfloat16 output says nothing of the math
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 64, "K": 512, "N": 96}, "small"),
        # M = 1 (decode), K and N not multiples of any tile size.
        Shape("awkward", {"M": 1, "K": 1000, "N": 300}, "awkward"),
        # 16384 tokens through an 8192 x 8192 projection: 128 + 64 MiB of FP8 operands, 256 MiB of
        # bfloat16 output.
        Shape("large", {"M": 16384, "K": 8192, "N": 8192}, "large"),
    ],
    dtypes=("bfloat16",),
    contract=Custom(fn=check, reference_precision=None, description=(
        "FP8 E4M3 row-scaled GEMM, bf16 output: |y - e| <= (2^-8 + 3*2^-24)|e| + 1.01*K*2^-24*sum_k|a b|*a_scale*b_scale per "
        "element, e the exact float64 value (one bf16 rounding, float32 scaling, worst-case float32 accumulation)")),
    flops=flops,
    bytes=bytes_moved,
)
