import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _margin_ranking_kernel(x1_ptr, x2_ptr, y_ptr, out_ptr, n, margin, BLOCK: tl.constexpr):
    # max(0, -y (x1 - x2) + margin) per element, in float32.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x1 = tl.load(x1_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x2_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    loss = tl.maximum(margin - y * (x1 - x2), 0.0)
    tl.store(out_ptr + offs, loss.to(out_ptr.dtype.element_ty), mask=mask)


def kernel_function(x1, x2, y, margin):
    x1 = x1.contiguous()
    x2 = x2.contiguous()
    y = y.contiguous()
    out = torch.empty_like(x1)
    n = x1.numel()
    if n:
        _margin_ranking_kernel[(triton.cdiv(n, BLOCK),)](x1, x2, y, out, n, float(margin), BLOCK=BLOCK, num_warps=4)
    return out
