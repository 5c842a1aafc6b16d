import torch
import triton
import triton.language as tl

MAX_BLOCK_C = 2048
TILE = 4096  # elements per tile: BLOCK_R rows x BLOCK_C columns


@triton.jit
def _cumsum_kernel(x_ptr, y_ptr, R, C, stride_x, stride_y,
                   BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # Each program scans BLOCK_R rows block by block: an in-block float32 scan (tl.cumsum) plus
    # the running total of the blocks before it, carried per row. The carry is the scan's last
    # column (masked tail elements load as 0, so it is the row total so far). Writing it as
    # `carry += tl.sum(x, axis=1)` instead crashes Triton 3.6's NVIDIA compiler for float32
    # (OptimizeThreadLocality: `loopResult.hasOneUse()` assertion).
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < R
    cols = tl.arange(0, BLOCK_C)
    x_base = x_ptr + rows[:, None].to(tl.int64) * stride_x
    y_base = y_ptr + rows[:, None].to(tl.int64) * stride_y
    carry = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for start in range(0, C, BLOCK_C):
        offs = start + cols
        mask = row_ok[:, None] & (offs < C)[None, :]
        x = tl.load(x_base + offs[None, :], mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=1) + carry[:, None]
        tl.store(y_base + offs[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
        carry = tl.sum(tl.where((cols == BLOCK_C - 1)[None, :], y, 0.0), axis=1)


def kernel_function(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    C = x.shape[-1]
    x2 = x.view(-1, C)
    y2 = y.view(-1, C)
    R = x2.shape[0]
    BLOCK_C = min(triton.next_power_of_2(C), MAX_BLOCK_C)
    BLOCK_R = min(max(TILE // BLOCK_C, 1), triton.next_power_of_2(R))
    grid = (triton.cdiv(R, BLOCK_R),)
    _cumsum_kernel[grid](x2, y2, R, C, x2.stride(0), y2.stride(0), BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, num_warps=8 if BLOCK_R * BLOCK_C >= 4096 else 4)
    return y
