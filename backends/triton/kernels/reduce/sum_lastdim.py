import torch
import triton
import triton.language as tl

MAX_BLOCK_C = 2048
TILE = 4096  # elements per loaded tile: BLOCK_R rows x BLOCK_C columns


@triton.jit
def _sum_lastdim_kernel(x_ptr, y_ptr, R, C, stride_x,
                        BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # Each program reduces BLOCK_R rows, streaming them in [BLOCK_R, BLOCK_C] tiles into a
    # float32 accumulator of the same shape, then sums the accumulator across columns.
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < R
    cols = tl.arange(0, BLOCK_C)
    base = x_ptr + rows[:, None].to(tl.int64) * stride_x
    acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for start in range(0, C, BLOCK_C):
        offs = start + cols
        mask = row_ok[:, None] & (offs < C)[None, :]
        acc += tl.load(base + offs[None, :], mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=1)
    tl.store(y_ptr + rows, total.to(y_ptr.dtype.element_ty), mask=row_ok)


def kernel_function(x):
    x = x.contiguous()
    C = x.shape[-1]
    if x.numel() == 0:  # empty rows sum to zero
        return torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    x2 = x.view(-1, C)
    R = x2.shape[0]
    y = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
    BLOCK_C = min(triton.next_power_of_2(C), MAX_BLOCK_C)
    BLOCK_R = min(max(TILE // BLOCK_C, 1), triton.next_power_of_2(R))
    grid = (triton.cdiv(R, BLOCK_R),)
    _sum_lastdim_kernel[grid](x2, y, R, C, x2.stride(0), BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, num_warps=8 if BLOCK_R * BLOCK_C >= 4096 else 4)
    return y
