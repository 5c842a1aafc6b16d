import torch
import triton
import triton.language as tl

MAX_BLOCK_D = 2048
TILE = 4096  # elements per loaded tile: BLOCK_R rows x BLOCK_D columns


@triton.jit
def _mse_rows_kernel(p_ptr, t_ptr, out_ptr, R, D, stride_p, stride_t,
                     BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # Each program reduces BLOCK_R rows: (pred - target)^2 in float32 (the difference of two
    # close inputs is exact there), accumulated per lane across [BLOCK_R, BLOCK_D] tiles, summed
    # across lanes at the end (a blocked + tree order), then divided by D.
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < R
    cols = tl.arange(0, BLOCK_D)
    r64 = rows[:, None].to(tl.int64)
    acc = tl.zeros((BLOCK_R, BLOCK_D), dtype=tl.float32)
    for start in range(0, D, BLOCK_D):
        offs = start + cols
        mask = row_ok[:, None] & (offs < D)[None, :]
        p = tl.load(p_ptr + r64 * stride_p + offs[None, :], mask=mask, other=0.0).to(tl.float32)
        t = tl.load(t_ptr + r64 * stride_t + offs[None, :], mask=mask, other=0.0).to(tl.float32)
        d = p - t
        acc += d * d
    loss = tl.sum(acc, axis=1) / D
    tl.store(out_ptr + rows, loss.to(out_ptr.dtype.element_ty), mask=row_ok)


def kernel_function(pred, target):
    pred = pred.contiguous()
    target = target.contiguous()
    R, D = pred.shape
    out = torch.empty((R,), dtype=pred.dtype, device=pred.device)
    if R == 0:
        return out
    BLOCK_D = min(triton.next_power_of_2(D), MAX_BLOCK_D)
    BLOCK_R = min(max(TILE // BLOCK_D, 1), triton.next_power_of_2(R))
    grid = (triton.cdiv(R, BLOCK_R),)
    _mse_rows_kernel[grid](pred, target, out, R, D, pred.stride(0), target.stride(0),
                           BLOCK_R=BLOCK_R, BLOCK_D=BLOCK_D, num_warps=8)
    return out
