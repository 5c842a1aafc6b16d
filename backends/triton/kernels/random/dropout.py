import torch
import triton
import triton.language as tl


@triton.jit
def _dropout(x_ptr, y_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.rand(seed, offs)  # Philox counter-based: deterministic per (seed, offset)
    y = tl.where(r >= p, tl.math.div_rn(x, 1.0 - p), 0.0)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x, p, seed):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK = 1024
    _dropout[(triton.cdiv(n, BLOCK),)](x, y, n, p, seed, BLOCK=BLOCK)
    return y
