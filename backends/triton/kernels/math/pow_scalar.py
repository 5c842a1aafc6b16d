"""x ** p of a contiguous tensor for a Python float exponent p (not an integer), over the dtype's
whole range, with IEEE pow's special values.

pow = exp2(p log2 x) in float32 with its own log2, from the bit pattern: x = 2^k m, m in
[sqrt(1/2), sqrt(2)), log2(m) = 2 atanh(s) / log 2 with s = (m - 1) / (m + 1) (series through s^11,
truncation below 1e-10 relative). The exponent k is exact, so the only rounding in p log2 x is
that of p k + p log2(m) (<= 2^-24 |p log2 x|: 8e-6 relative in the result at |p log2 x| = 126),
where a GPU's approximate log2 would add ~2^-22 relative of log2 x on top. Subnormal inputs (the
large shape's p = 0.75 reaches x = 2^-149) are normalised through their integer mantissa, never
by float arithmetic that a GPU might flush to zero. Special values by selects (p not an odd
integer): finite x < 0 -> NaN, +-0 -> 0 (p > 0) or inf (p < 0), +-inf -> inf or 0, x = 1 -> 1,
NaN -> NaN.
Streamed flat (BLOCK elements per program), one rounding to the output dtype.
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _pow_scalar_kernel(x_ptr, y_ptr, n, p, IS_BF16: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    raw = tl.load(x_ptr + offs, mask=mask, other=1.0)
    if IS_BF16:
        # widened by its bits (exact): the interpreter's bfloat16 conversion flushes subnormals
        bits = raw.to(tl.int16, bitcast=True).to(tl.int32) << 16
        x = bits.to(tl.float32, bitcast=True)
    else:
        x = raw.to(tl.float32)
        bits = x.to(tl.int32, bitcast=True)
    mag = bits & 0x7FFFFFFF
    subnormal = mag < 0x00800000
    # a subnormal x is mant * 2^-149: take the (exact) float of its integer mantissa instead
    xs = tl.where(subnormal, mag.to(tl.float32), x)
    sbits = xs.to(tl.int32, bitcast=True)
    k = ((sbits >> 23) & 0xFF) - tl.where(subnormal, 127 + 149, 127)
    m = ((sbits & 0x007FFFFF) | 0x3F800000).to(tl.float32, bitcast=True)
    high = m > 1.4142135623730951
    m = tl.where(high, m * 0.5, m)
    k = tl.where(high, k + 1, k)
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    series = 1.0 + z * (0.3333333333333333 + z * (0.2 + z * (0.14285714285714285 + z * (0.1111111111111111 + z * 0.09090909090909091))))
    log2m = 2.8853900817779268 * s * series  # 2 / log(2) * atanh(s)
    y = tl.exp2(p * k.to(tl.float32) + p * log2m)
    y = tl.where(mag == 0, tl.where(p > 0, 0.0, float("inf")), y)
    y = tl.where(x == float("inf"), tl.where(p > 0, float("inf"), 0.0), y)
    y = tl.where(x == 1.0, 1.0, y)
    y = tl.where(((bits < 0) & (mag != 0)) | (x != x), float("nan"), y)  # sign bit: no float compare
    y = tl.where(x == float("-inf"), tl.where(p > 0, float("inf"), 0.0), y)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x, p):
    y = torch.empty_like(x)
    n = x.numel()
    _pow_scalar_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, float(p), IS_BF16=x.dtype == torch.bfloat16,
                                                   BLOCK=BLOCK, num_warps=4)
    return y
