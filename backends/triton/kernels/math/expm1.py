"""exp(x) - 1 of a contiguous tensor: accurate for tiny x, up to the overflow threshold and past it.

Three regimes, all evaluated (branch-free) and selected per element, in float32:
  * |x| < 2^-30: expm1(x) = x to float32 precision, returned as the input's own bits (no float
    arithmetic on it, so subnormal inputs survive even where the GPU flushes subnormals to zero);
  * |x| < 0.35: the Taylor series x (1 + x/2 (1 + x/3 (... (1 + x/8)))), truncation error below
    1e-9 relative: no cancellation, which exp(x) - 1 suffers near 0;
  * otherwise exp(x) - 1, whose relative error there is a few ulps (plus the rounding of x log2 e
    inside a GPU exp, at most 5e-6 at x = 88): overflow to inf past log(max), -1 for x -> -inf,
    NaN propagating, exactly as the float64 reference rounded to the dtype.
bfloat16 is widened and narrowed by its bit pattern (round to nearest even): the interpreter's own
bfloat16 conversions flush subnormals, which this task's tiny inputs and outputs include; on a
GPU the bit path is as exact as the hardware conversion. Streamed flat (BLOCK elements per program).
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _expm1_kernel(x_ptr, y_ptr, n, IS_BF16: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    raw = tl.load(x_ptr + offs, mask=mask, other=0.0)
    if IS_BF16:
        x = (raw.to(tl.int16, bitcast=True).to(tl.int32) << 16).to(tl.float32, bitcast=True)
    else:
        x = raw.to(tl.float32)
    a = tl.abs(x)
    p = 1.0 + x * 0.125
    for k in tl.static_range(7, 1, -1):
        p = 1.0 + x * (1.0 / k) * p
    series = x * p
    y = tl.where(a < 0.35, series, tl.exp(x) - 1.0)
    y = tl.where(a < 9.313225746154785e-10, x, y)
    if IS_BF16:
        b = y.to(tl.int32, bitcast=True)
        b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
        out = tl.where(y != y, 0x7FC0, b).to(tl.int16).to(tl.bfloat16, bitcast=True)
    else:
        out = y.to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + offs, out, mask=mask)


def kernel_function(x):
    y = torch.empty_like(x)
    n = x.numel()
    _expm1_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, IS_BF16=x.dtype == torch.bfloat16, BLOCK=BLOCK, num_warps=4)
    return y
