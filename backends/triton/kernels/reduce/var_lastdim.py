"""torch.var(x, dim=-1, unbiased=False) of a 2-D tensor [R, C] -> [R].

The task puts every row at mean 100 with std ~1, where the one-pass E[x^2] - E[x]^2 loses four
of float32's seven digits. This kernel holds each row in registers (one read of x) and takes the
exact two-pass form there: mean first, then the mean of squared deviations. The rounding error of
the mean enters the variance only squared, so the result is accurate to float32 whatever the
offset. BLOCK_R rows per program keep short rows from leaving most lanes idle; rows up to
MAX_COLS elements fit (the task's longest is 8192, 32 KiB of float32 per row: 16 values per
thread at 16 warps).
"""
import torch
import triton
import triton.language as tl

MAX_COLS = 8192
TILE = 4096  # minimum elements per program: short rows are batched BLOCK_R to a program


@triton.jit
def _var_rows_kernel(x_ptr, y_ptr, R, C, stride_xr, stride_xc,
                     BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < R
    cols = tl.arange(0, BLOCK_C)
    mask = row_ok[:, None] & (cols < C)[None, :]
    ptrs = x_ptr + rows[:, None].to(tl.int64) * stride_xr + cols[None, :] * stride_xc
    x = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=1) / C
    d = tl.where(mask, x - mean[:, None], 0.0)
    var = tl.sum(d * d, axis=1) / C
    tl.store(y_ptr + rows, var.to(y_ptr.dtype.element_ty), mask=row_ok)


def kernel_function(x):
    R, C = x.shape
    assert 0 < C <= MAX_COLS, f"rows of 1..{MAX_COLS} elements are held in registers"
    y = torch.empty((R,), dtype=x.dtype, device=x.device)
    if R == 0:
        return y
    BLOCK_C = triton.next_power_of_2(C)
    BLOCK_R = min(max(TILE // BLOCK_C, 1), triton.next_power_of_2(R))
    tile = BLOCK_R * BLOCK_C
    num_warps = 4 if tile <= 1024 else (8 if tile <= 4096 else 16)
    _var_rows_kernel[(triton.cdiv(R, BLOCK_R),)](x, y, R, C, x.stride(0), x.stride(1),
                                                 BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, num_warps=num_warps)
    return y
