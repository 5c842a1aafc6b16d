"""hardswish, x * min(max(x + 3, 0), 6) / 6, of a contiguous tensor.

A memory-bound elementwise op, streamed flat (BLOCK consecutive elements per program, 16 per thread
at 4 warps). The three pieces (0 for x <= -3, x for x >= 3, the quadratic ramp between) all fall
out of the clamp; float32 math, one rounding to the output dtype.
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _hardswish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x * tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0) / 6.0
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x):
    y = torch.empty_like(x)
    n = x.numel()
    _hardswish_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=4)
    return y
