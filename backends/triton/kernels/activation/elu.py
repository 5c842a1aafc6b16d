import torch
import triton
import triton.language as tl

BLOCK = 1024
ALPHA = 1.0


@triton.jit
def _elu_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    # x for x > 0, alpha (exp(x) - 1) otherwise, in float32. exp(x) - 1 has an absolute error of
    # about one float32 ulp of 1 next to 0, far inside the task's atol (1e-5 x rms).
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    neg = alpha * (tl.exp(tl.minimum(x, 0.0)) - 1.0)
    y = tl.where(x > 0.0, x, neg)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        _elu_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, ALPHA, BLOCK=BLOCK, num_warps=4)
    return y
