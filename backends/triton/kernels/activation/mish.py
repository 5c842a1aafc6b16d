"""Mish, x * tanh(softplus(x)), of a contiguous tensor, for inputs far beyond exp's range.

A memory-bound elementwise op, streamed flat (BLOCK consecutive elements per program). The math is
float32 with one rounding to the output dtype. With e = exp(x), tanh(log(1 + e)) is exactly
((1 + e)^2 - 1) / ((1 + e)^2 + 1) = n / (n + 2) with n = e (e + 2): one exp and one division, all
terms positive (no cancellation), and for x << 0 it tends to e smoothly (mish ~ x e^x, down to
-0). For x > 20, tanh(softplus(x)) is 1 to far below float32's precision, so x is returned
directly and exp never overflows.
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _mish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    e = tl.exp(tl.minimum(x, 20.0))
    num = e * (e + 2.0)
    y = tl.where(x > 20.0, x, x * num / (num + 2.0))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x):
    y = torch.empty_like(x)
    n = x.numel()
    _mish_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=4)
    return y
