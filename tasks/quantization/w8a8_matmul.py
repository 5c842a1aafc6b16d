"""W8A8 matmul: int8 activations with per-row scales times int8 weights with per-channel scales.

Contract, written out:
  * inputs: A int8 [M, K] (values in [-127, 127]) with a_scale float32 [M]; W int8 [N, K]
    (values in [-127, 127]) with w_scale float32 [N]; out_dtype, a str naming the task dtype,
    which selects the output dtype: float32 -> float32 output, bfloat16 -> bfloat16 output
  * accumulation: acc[m, n] = sum_k A[m, k] * W[n, k], exact in int32 (|acc| <= 16129 K < 2^31
    for K < 133,000; every shape here has K <= 8192)
  * output: y[m, n] = (float32(acc) * a_scale[m]) * w_scale[n], rounded to out_dtype, [M, N]
  * comparison: per element against the exact value e = acc * a_scale[m] * w_scale[n] (float64),
    |y - e| <= (u_out + 4 * 2^-24) * |e|, u_out = 2^-24 (float32) or 2^-8 (bfloat16): one rounding
    to the output dtype plus up to three float32 roundings (acc to float32, the two scale products,
    in any order or with a_scale * w_scale formed first). No absolute slack: acc = 0 must give 0.
  * what this does and does not force: the contract is on the value of the exact integer sum.
    A kernel that accumulates the int8 values in float32 (e.g. bf16/fp16 tensor cores, where
    int8 values and their products are exact) gives the same acc whenever every partial sum stays
    below 2^24 in magnitude; that is guaranteed only for K <= 1040, and on these inputs
    (quantized heavy-tailed activations and Gaussian weights) it holds in practice, so such a
    kernel is NOT claimed to fail. Dequantizing before the matmul (float32 A*a_scale and
    W*w_scale, then a float matmul) rounds before the sum: it fails the float32 output on every
    tested input; for bfloat16 output it fails only where a sum cancels to (near) zero (acc = 0
    must give exactly 0), so it is not caught on every input set. bfloat16 compute fails float32.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.task import DTYPES
from mkbench.taskkit import itemsize, randn

UNIT_ROUNDOFF = {torch.float32: 2.0 ** -24, torch.bfloat16: 2.0 ** -8}


def _exact_acc(a, w):
    # float64 holds every partial sum exactly (|partial| < 2^31 << 2^53), in any order.
    return a.to(torch.float64) @ w.to(torch.float64).T


def reference(a, a_scale, w, w_scale, out_dtype):
    acc = _exact_acc(a, w).to(torch.int32)
    y = (acc.to(torch.float32) * a_scale.to(torch.float32)[:, None]) * w_scale.to(torch.float32)[None, :]
    return y.to(DTYPES[out_dtype])


def check(ctx):
    a, a_scale, w, w_scale, out_dtype = ctx.inputs
    (y,) = ctx.outputs
    exact = _exact_acc(a, w) * a_scale.to(torch.float64)[:, None] * w_scale.to(torch.float64)[None, :]
    rtol = UNIT_ROUNDOFF[DTYPES[out_dtype]] + 4 * 2.0 ** -24
    yd = y.to(torch.float64)
    err = (yd - exact).abs()
    bad = ~(err <= rtol * exact.abs())  # NaN in y counts as bad
    max_abs = float(err.max()) if err.numel() else 0.0
    rel = float((err / exact.abs().clamp_min(1e-300)).max()) if err.numel() else 0.0
    if bool(bad.any()):
        n = int(bad.sum())
        i = int(torch.nonzero(bad.flatten())[0])
        return CheckResult(False, f"y: {n}/{y.numel()} values outside rtol {rtol:.3g} of acc*a_scale*w_scale (first at flat "
                                  f"index {i}: got {float(yd.flatten()[i]):.8g}, expected {float(exact.flatten()[i]):.8g})",
                           max_abs, rel)
    return CheckResult(True, "", max_abs, rel)


def _quantize_rows(x):
    scale = x.abs().amax(dim=-1).clamp_min(1e-8) / 127.0
    return torch.round(x / scale[:, None]).clamp(-127, 127).to(torch.int8), scale


def make_inputs(shape, dtype, gen):
    m, k, n = shape["M"], shape["K"], shape["N"]
    # Activations: heavy-tailed with outliers, quantized per row; weights: Gaussian, per channel.
    x = randn(gen, (m, k), torch.float32, scale=1.0, offset=0.1, outliers=2e-3, outlier_scale=20.0)
    wf = randn(gen, (n, k), torch.float32, scale=0.02)
    a, a_scale = _quantize_rows(x)
    w, w_scale = _quantize_rows(wf)
    return (a, a_scale, w, w_scale, [name for name, v in DTYPES.items() if v == dtype][0])


def flops(shape):
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def bytes_moved(shape, dtype):
    m, k, n = shape["M"], shape["K"], shape["N"]
    return float(m * k + n * k + 4 * m + 4 * n + m * n * itemsize(dtype))


TASK = Task(
    name="w8a8_matmul",
    category="quantization",
    description="int8 x int8 matmul with exact int32 accumulation, scaled by per-row activation and per-channel weight fp32 scales",
    math_peak="int8",  # the products run on the int8 tensor cores (int32 accumulation); the output dtype says nothing of the math
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 64, "K": 512, "N": 96}, "small"),
        # M = 1 (decode), K and N not multiples of any tile size
        Shape("awkward", {"M": 1, "K": 1000, "N": 300}, "awkward"),
        Shape("large", {"M": 16384, "K": 8192, "N": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "W8A8: acc = A @ W^T exact int32; y = acc*a_scale[m]*w_scale[n] in float32 (task float32) or bfloat16 (task bfloat16); "
        "|y - exact| <= (u_out + 4*2^-24)*|exact| per element, no absolute slack")),
    flops=flops,
    bytes=bytes_moved,
)
