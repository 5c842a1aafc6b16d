import torch
import triton
import triton.language as tl


@triton.jit
def _upsample_nearest2x_kernel(x_ptr, y_ptr, H, W, BLOCK: tl.constexpr):
    # Grid: (N * C planes, blocks of the 2H x 2W output plane); out[oh, ow] = x[oh // 2, ow // 2].
    plane = tl.program_id(0).to(tl.int64)
    OW = 2 * W
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < 2 * H * OW
    oh = offs // OW
    ow = offs % OW
    v = tl.load(x_ptr + plane * (H * W) + (oh // 2) * W + (ow // 2), mask=mask)
    tl.store(y_ptr + plane * (4 * H * W) + offs, v, mask=mask)


def kernel_function(x):
    x = x.contiguous()
    n, c, h, w = x.shape
    y = torch.empty((n, c, 2 * h, 2 * w), dtype=x.dtype, device=x.device)
    plane = 4 * h * w
    if y.numel() == 0:
        return y
    BLOCK = min(triton.next_power_of_2(plane), 2048)
    grid = (n * c, triton.cdiv(plane, BLOCK))
    _upsample_nearest2x_kernel[grid](x, y, h, w, BLOCK=BLOCK, num_warps=4)
    return y
