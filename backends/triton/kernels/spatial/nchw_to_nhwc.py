import torch
import triton
import triton.language as tl


@triton.jit
def _nchw_to_nhwc_kernel(x_ptr, y_ptr, C, HW, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    # Per image n (grid axis 1), a tiled transpose of [C, HW] into [HW, C]: the tile is read along
    # pixels (contiguous in NCHW), transposed in registers, and written along channels
    # (contiguous in NHWC), so both sides stay coalesced.
    n = tl.program_id(1).to(tl.int64)
    num_p = tl.cdiv(HW, BLOCK_P)
    c = (tl.program_id(0) // num_p) * BLOCK_C + tl.arange(0, BLOCK_C)
    p = (tl.program_id(0) % num_p) * BLOCK_P + tl.arange(0, BLOCK_P)
    base = n * C * HW
    mask = (c < C)[:, None] & (p < HW)[None, :]
    tile = tl.load(x_ptr + base + c[:, None].to(tl.int64) * HW + p[None, :], mask=mask)
    out = tl.trans(tile)
    out_mask = (p < HW)[:, None] & (c < C)[None, :]
    tl.store(y_ptr + base + p[:, None].to(tl.int64) * C + c[None, :], out, mask=out_mask)


def kernel_function(x):
    x = x.contiguous()
    n, c, h, w = x.shape
    y = torch.empty((n, h, w, c), dtype=x.dtype, device=x.device)
    hw = h * w
    if y.numel() == 0:
        return y
    BLOCK_C = min(triton.next_power_of_2(c), 64)
    BLOCK_P = 64
    grid = (triton.cdiv(c, BLOCK_C) * triton.cdiv(hw, BLOCK_P), n)
    _nchw_to_nhwc_kernel[grid](x, y, c, hw, BLOCK_C=BLOCK_C, BLOCK_P=BLOCK_P, num_warps=4)
    return y
