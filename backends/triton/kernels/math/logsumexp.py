import torch
import triton
import triton.language as tl

MAX_BLOCK = 8192  # rows up to this long are one block in registers; longer rows are streamed
LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def _logsumexp_kernel(x_ptr, y_ptr, C, stride_x, BLOCK: tl.constexpr):
    # One program per row; an online (max, scaled sum) pair is carried across column blocks, so
    # the row is read once. As in torch, an infinite running max is replaced by 0 as the shift:
    # all -inf gives log(0) = -inf, any +inf gives inf, and NaN reaches the sum through exp.
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    cols = tl.arange(0, BLOCK)
    m = float("-inf")
    s = 0.0
    for start in range(0, C, BLOCK):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs < C, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        shift = tl.where(tl.abs(m_new) == float("inf"), 0.0, m_new)
        s = s * tl.exp2((m - shift) * LOG2E) + tl.sum(tl.exp2((x - shift) * LOG2E), axis=0)
        m = m_new
    shift = tl.where(tl.abs(m) == float("inf"), 0.0, m)
    tl.store(y_ptr + row, (tl.log(s) + shift).to(y_ptr.dtype.element_ty))


def kernel_function(x):
    x = x.contiguous()
    C = x.shape[-1]
    y = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    x2 = x.view(-1, C)
    BLOCK = min(triton.next_power_of_2(max(C, 1)), MAX_BLOCK)
    num_warps = 4 if BLOCK <= 1024 else (8 if BLOCK <= 4096 else 16)
    _logsumexp_kernel[(x2.shape[0],)](x2, y, C, x2.stride(0), BLOCK=BLOCK, num_warps=num_warps)
    return y
