"""torch.diff(x, dim=1) of x [B, T, D] -> [B, T-1, D]: out[b, t] = x[b, t+1] - x[b, t] along the
strided middle dim.

Each program owns a [BLOCK_T, BLOCK_D] output tile of one batch b (grid: tiles on axis 0, batch on
axis 1): it loads rows t..t+BLOCK_T-1 and the same rows shifted by one (the overlap is an L1/L2
hit, so x is read from DRAM about once), both contiguous along D, and subtracts in float32, one
rounding to the output dtype (exact or nearly for these close neighbours). int64 row offsets:
B T D reaches 134M elements.
"""
import torch
import triton
import triton.language as tl

BLOCK_T = 8


@triton.jit
def _diff_kernel(x_ptr, y_ptr, T, D, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(1).to(tl.int64)
    num_d = tl.cdiv(D, BLOCK_D)
    t = (tl.program_id(0) // num_d) * BLOCK_T + tl.arange(0, BLOCK_T)
    d = (tl.program_id(0) % num_d) * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = (t < T - 1)[:, None] & (d < D)[None, :]
    src = x_ptr + b * T * D + t[:, None].to(tl.int64) * D + d[None, :]
    lo = tl.load(src, mask=mask, other=0.0).to(tl.float32)
    hi = tl.load(src + D, mask=mask, other=0.0).to(tl.float32)
    dst = y_ptr + b * (T - 1) * D + t[:, None].to(tl.int64) * D + d[None, :]
    tl.store(dst, (hi - lo).to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x):
    B, T, D = x.shape
    y = torch.empty((B, T - 1, D), dtype=x.dtype, device=x.device)
    block_d = min(256, triton.next_power_of_2(D))
    grid = (triton.cdiv(T - 1, BLOCK_T) * triton.cdiv(D, block_d), B)
    _diff_kernel[grid](x, y, T, D, BLOCK_T=BLOCK_T, BLOCK_D=block_d, num_warps=4)
    return y
