import torch
import triton
import triton.language as tl


@triton.jit
def _avg_pool3x3s2_kernel(x_ptr, y_ptr, total, H, W, OH, OW, BLOCK: tl.constexpr):
    # One program handles BLOCK consecutive outputs of the flattened [N, C, OH, OW] tensor; each
    # sums the in-image taps of its 3x3 window (stride 2, padding 1) and divides by their count
    # (count_include_pad=False).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    valid = offs < total
    ohw = OH * OW
    plane = offs // ohw
    rem = offs - plane * ohw
    oh = rem // OW
    ow = rem - oh * OW
    h0 = oh * 2 - 1
    w0 = ow * 2 - 1
    base = x_ptr + plane.to(tl.int64) * (H * W)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for kh in tl.static_range(3):
        ih = h0 + kh
        row_ok = valid & (ih >= 0) & (ih < H)
        for kw in tl.static_range(3):
            iw = w0 + kw
            m = row_ok & (iw >= 0) & (iw < W)
            acc += tl.load(base + ih * W + iw, mask=m, other=0.0).to(tl.float32)
    # in-image extent of the window along each axis (padding 1: the clipped part is at most 1)
    rows = tl.minimum(h0 + 3, H) - tl.maximum(h0, 0)
    cols = tl.minimum(w0 + 3, W) - tl.maximum(w0, 0)
    count = (rows * cols).to(tl.float32)
    tl.store(y_ptr + offs, (acc / count).to(y_ptr.dtype.element_ty), mask=valid)


def kernel_function(x):
    x = x.contiguous()
    n, c, h, w = x.shape
    oh = (h + 2 - 3) // 2 + 1
    ow = (w + 2 - 3) // 2 + 1
    y = torch.empty((n, c, oh, ow), dtype=x.dtype, device=x.device)
    total = y.numel()
    if total == 0:
        return y
    if total >= 2**31:
        raise ValueError("this kernel uses 32-bit output offsets")
    BLOCK = 1024
    _avg_pool3x3s2_kernel[(triton.cdiv(total, BLOCK),)](x, y, total, h, w, oh, ow, BLOCK=BLOCK, num_warps=4)
    return y
