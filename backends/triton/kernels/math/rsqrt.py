"""1 / sqrt(x) of a contiguous tensor over the whole positive range, subnormal inputs included.

GPU rsqrt instructions (and float32 multiplies compiled with flush-to-zero) may treat a subnormal
input as 0 and return inf. So subnormal inputs (exponent field 0) take an integer path that never
does float arithmetic on a subnormal: x = m * 2^-149 with m the 23-bit mantissa as an integer,
converted exactly to a normal float32, and rsqrt(x) = rsqrt(m) * 2^74.5. Normal inputs use rsqrt
directly (hardware approximate rsqrt is ~2^-22 relative, far inside rtol 1e-4). Signs come from
the bit pattern, not a float compare (which might flush -subnormals to -0): negative inputs give
NaN, +-0 gives +-inf, +inf gives 0. Half-precision inputs are widened to float32 first (float16
subnormals become normal float32 numbers; bfloat16 ones stay subnormal and take the integer path).
A memory-bound elementwise op, streamed flat (BLOCK elements per program).
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _rsqrt_kernel(x_ptr, y_ptr, n, IS_BF16: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    raw = tl.load(x_ptr + offs, mask=mask, other=1.0)
    if IS_BF16:
        # bfloat16 -> float32 by its bit pattern (exact, subnormals included); the interpreter's
        # conversion flushes bfloat16 subnormals to zero.
        bits = raw.to(tl.int16, bitcast=True).to(tl.int32) << 16
        x = bits.to(tl.float32, bitcast=True)
    else:
        x = raw.to(tl.float32)
        bits = x.to(tl.int32, bitcast=True)
    mag = bits & 0x7FFFFFFF
    subnormal = (bits > 0) & (bits < 0x00800000)  # positive, exponent field 0, nonzero
    m = tl.where(subnormal, mag, 1).to(tl.float32)  # exact: m < 2^23
    y_sub = tl.rsqrt(m) * 2.671373890628154e22  # 2^74.5
    y = tl.where(subnormal, y_sub, tl.rsqrt(tl.where(subnormal, 1.0, x)))
    y = tl.where(mag == 0, tl.where(bits < 0, float("-inf"), float("inf")), y)  # rsqrt(+-0) = +-inf
    y = tl.where((bits < 0) & (mag != 0), float("nan"), y)  # any negative number
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x):
    y = torch.empty_like(x)
    n = x.numel()
    _rsqrt_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, IS_BF16=x.dtype == torch.bfloat16, BLOCK=BLOCK, num_warps=4)
    return y
