"""Normalized sinc, sin(pi x) / (pi x) with sinc(0) = 1, of a contiguous tensor.

No tl.sin: a GPU's fast sine has an absolute error of ~5e-7, which divided by pi x is far outside
the contract for tiny |x|. Instead the argument is reduced exactly, x = n + r with n = round(x)
and |r| <= 1/2 (x - n is exact in floating point), so sin(pi x) = (-1)^n sin(pi r), and
sin(t) / t is a short Taylor polynomial in t^2 on |t| <= pi/2 (truncation error 4e-10). For n = 0
the polynomial is sinc itself (no division, so x = 0 gives exactly 1 and tiny x keep full
relative accuracy); otherwise sinc = (-1)^n r S(pi r) / x, exactly 0 at the integers.
Float32 math, one rounding to the output dtype; streamed flat (BLOCK elements per program).
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _sin_over_t(t):
    # sin(t) / t for |t| <= pi/2: Taylor terms through t^12 / 13!.
    u = t * t
    p = 1.6059043836821613e-10
    p = p * u - 2.505210838544172e-08
    p = p * u + 2.7557319223985893e-06
    p = p * u - 1.984126984126984e-04
    p = p * u + 8.333333333333333e-03
    p = p * u - 1.6666666666666666e-01
    return p * u + 1.0


@triton.jit
def _sinc_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    k = tl.floor(x + 0.5)
    r = x - k
    half = k * 0.5
    sign = tl.where(half == tl.floor(half), 1.0, -1.0)
    pi = 3.141592653589793
    y = tl.where(k == 0.0, _sin_over_t(pi * x), sign * r * _sin_over_t(pi * r) / x)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x):
    y = torch.empty_like(x)
    n = x.numel()
    _sinc_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=4)
    return y
