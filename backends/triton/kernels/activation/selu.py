"""SELU, scale * (x if x > 0 else alpha (exp(x) - 1)), with torch's constants, of a contiguous tensor.

A memory-bound elementwise op, streamed flat (BLOCK consecutive elements per program, 16 per thread
at 4 warps). float32 math, one rounding to the output dtype. exp(x) - 1 near 0 has an absolute
error of about one float32 ulp of 1, far inside the task's atol (1e-5 x rms); exp's argument is
clamped to <= 0 so the unused branch never overflows.
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048
ALPHA = 1.6732632423543772
SCALE = 1.0507009873554805


@triton.jit
def _selu_kernel(x_ptr, y_ptr, n, alpha, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    neg = alpha * (tl.exp(tl.minimum(x, 0.0)) - 1.0)
    y = scale * tl.where(x > 0.0, x, neg)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x):
    y = torch.empty_like(x)
    n = x.numel()
    _selu_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, ALPHA, SCALE, BLOCK=BLOCK, num_warps=4)
    return y
