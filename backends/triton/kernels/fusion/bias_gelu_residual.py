import torch
import triton
import triton.language as tl


@triton.jit
def _bias_gelu_residual_kernel(x_ptr, bias_ptr, res_ptr, y_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    col = offs % cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(bias_ptr + col, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    h = x + b
    y = 0.5 * h * (1.0 + tl.math.erf(h * 0.7071067811865476)) + r
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x, bias, residual):
    x = x.contiguous()
    bias = bias.contiguous()
    residual = residual.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    cols = x.shape[-1]
    BLOCK = 2048
    _bias_gelu_residual_kernel[(triton.cdiv(n, BLOCK),)](x, bias, residual, y, n, cols, BLOCK=BLOCK, num_warps=8)
    return y
