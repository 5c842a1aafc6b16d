"""W4A16 matmul: 4-bit group-quantized weights (AWQ / GPTQ style, asymmetric with zero points)
times 16-bit activations, the GEMM of weight-only int4 LLM inference.

Contract, written out:
  * inputs: x [M, K] activations in the task dtype (float16 or bfloat16);
    qweight uint8 [N, K/2]: unsigned 4-bit weight codes two per byte, q[n, 2i] in the low nibble
    (qweight[n, i] & 0xF) and q[n, 2i+1] in the high nibble (qweight[n, i] >> 4);
    scales [N, K/128] in the task dtype and zeros uint8 [N, K/128] (values 0..15): one scale and
    zero point per (output channel n, group of 128 consecutive k)
  * dequantized weight: w[n, k] = (q[n, k] - zeros[n, k // 128]) * scales[n, k // 128]
  * output: y = x @ w^T, [M, N] in the task dtype, accumulated in float32 (or wider)
  * comparison, per element, against the exact value e = sum_k x[m, k] w[n, k] (float64, w
    exact), with S = sum_k |x[m, k] w[n, k]|:
        |y - e| <= u_out * |e| + (u_w + 1.01 * K * 2^-24) * S
    u_out = unit roundoff of the output dtype (one rounding), u_w = the same unit roundoff for
    rounding w to the activation dtype (a kernel may dequantize into float16/bfloat16 and use
    16-bit tensor cores, or scale the integer partial sums in float32: both pass), and K u for a
    float32 sum of K terms in any order (the worst-case gamma_K).
    A kernel that ignores the zero points (or assumes 8), swaps the nibble order, applies the
    scale of the wrong group, or accumulates in 16 bits fails.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import itemsize, randn

GROUP = 128
UNIT_ROUNDOFF = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def _dequant(qweight, scales, zeros):
    n = qweight.shape[0]
    qi = qweight.to(torch.int32)
    q = torch.stack((qi & 0xF, qi >> 4), dim=-1).reshape(n, -1)
    k = q.shape[1]
    zi = zeros.to(torch.int32).repeat_interleave(GROUP, dim=1)[:, :k]
    s = scales.to(torch.float64).repeat_interleave(GROUP, dim=1)[:, :k]
    return (q - zi).to(torch.float64) * s


def reference(x, qweight, scales, zeros):
    k = x.shape[1]
    if k % GROUP:
        raise ValueError(f"w4a16_matmul: K = {k} is not divisible by {GROUP}")
    w = _dequant(qweight, scales, zeros).to(torch.float32)
    return (x.to(torch.float32) @ w.T).to(x.dtype)


def check(ctx):
    x, qweight, scales, zeros = ctx.inputs
    (y,) = ctx.outputs
    w = _dequant(qweight, scales, zeros)
    exact = x.to(torch.float64) @ w.T
    # sum |x w| only enters the bound: a float32 sum of non-negative terms is within K u of it
    # (1.01 covers that, even with TF32), at a fraction of a second float64 GEMM's cost.
    size = (x.abs().to(torch.float32) @ w.abs().to(torch.float32).T).to(torch.float64) * 1.01
    u = UNIT_ROUNDOFF[x.dtype]
    k = x.shape[1]
    bound = u * exact.abs() + (u + 1.01 * k * 2.0 ** -24) * size
    yd = y.to(torch.float64)
    err = (yd - exact).abs()
    bad = ~(err <= bound)
    max_abs = float(err.max()) if err.numel() else 0.0
    rel = float((err / exact.abs().clamp_min(1e-300)).max()) if err.numel() else 0.0
    if bool(bad.any()):
        n = int(bad.sum())
        i = int(torch.nonzero(bad.flatten())[0])
        return CheckResult(False, f"y: {n}/{y.numel()} values outside u|e| + (u + 1.01 K 2^-24) sum|x w| (first at flat index "
                                  f"{i}: got {float(yd.flatten()[i]):.6g}, expected {float(exact.flatten()[i]):.6g}, bound "
                                  f"{float(bound.flatten()[i]):.3g})", max_abs, rel)
    return CheckResult(True, "", max_abs, rel)


def make_inputs(shape, dtype, gen):
    m, k, n = shape["M"], shape["K"], shape["N"]
    x = randn(gen, (m, k), dtype, scale=1.0, offset=0.05, outliers=2e-3, outlier_scale=20.0)
    # Weights as a checkpoint would hold them, then AWQ-style asymmetric 4-bit group quantization:
    # per group, scale = (max - min) / 15, zero = round(-min / scale) in [0, 15].
    wf = randn(gen, (n, k), torch.float32, scale=0.02, offset=0.002, outliers=1e-3, outlier_scale=6.0)
    g = wf.reshape(n, k // GROUP, GROUP)
    lo, hi = g.amin(-1).clamp(max=0.0), g.amax(-1).clamp(min=0.0)
    scale = ((hi - lo).clamp_min(1e-8) / 15.0).to(dtype)
    s32 = scale.to(torch.float32)
    zero = torch.round(-lo / s32).clamp(0, 15)
    q = (torch.round(g / s32[:, :, None]) + zero[:, :, None]).clamp(0, 15).to(torch.int32).reshape(n, k)
    qweight = (q[:, 0::2] | (q[:, 1::2] << 4)).to(torch.uint8)
    return (x, qweight, scale, zero.to(torch.uint8))


def flops(shape):
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def bytes_moved(shape, dtype):
    m, k, n = shape["M"], shape["K"], shape["N"]
    groups = n * (k // GROUP)
    return float(m * k * itemsize(dtype) + n * k // 2 + groups * (itemsize(dtype) + 1) + m * n * itemsize(dtype))


TASK = Task(
    name="w4a16_matmul",
    category="quantization",
    description="W4A16 GEMM y = x @ w^T, w = (q - zero) * scale per group of 128 along K from uint4 codes packed two per "
                "byte (low nibble first); float16/bfloat16 activations, float32 accumulation",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 64, "K": 512, "N": 96}, "small"),
        # M = 1 (a decode step), 9 groups along K, N not a multiple of any tile size.
        Shape("awkward", {"M": 1, "K": 1152, "N": 300}, "awkward"),
        # Llama-3-8B MLP down projection (14336 -> 4096) over a 16384-token prefill batch:
        # 448 MiB of 16-bit activations, 28 MiB of packed weights, 128 MiB of output.
        Shape("large", {"M": 16384, "K": 14336, "N": 4096}, "large"),
    ],
    dtypes=("float16", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "W4A16 (uint4 codes, low nibble = even k; w = (q - zero[n,g])*scale[n,g], groups of 128 along K): "
        "|y - e| <= u|e| + (u + 1.01*K*2^-24)*sum_k|x w| per element, e exact, u the unit roundoff of the dtype")),
    flops=flops,
    bytes=bytes_moved,
)
