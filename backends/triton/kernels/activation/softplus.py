"""softplus, log(1 + exp(x)) with beta 1 and threshold 20 (x > 20 returns x), of a contiguous tensor.

A memory-bound elementwise op, streamed flat (BLOCK consecutive elements per program, 16 per thread
at 4 warps). float32 math, one rounding to the output dtype. For x <= 20, log(1 + exp(x)) =
max(x, 0) + log1p(exp(-|x|)): exp's argument is never positive, so nothing overflows (a literal
log(1 + exp(x)) in float16 does for x > 11), and log1p(e) uses Goldberg's trick (the rounding of
1 + e divided back out) so a tiny exp(x) for x << 0 keeps its relative accuracy instead of
rounding 1 + e to 1.
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048
THRESHOLD = 20.0


@triton.jit
def _softplus_kernel(x_ptr, y_ptr, n, threshold, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    e = tl.exp(-tl.abs(x))
    w = 1.0 + e
    log1p_e = tl.where(w == 1.0, e, tl.log(w) * (e / (w - 1.0)))
    y = tl.where(x > threshold, x, tl.maximum(x, 0.0) + log1p_e)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x):
    y = torch.empty_like(x)
    n = x.numel()
    _softplus_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, THRESHOLD, BLOCK=BLOCK, num_warps=4)
    return y
