"""F.adaptive_avg_pool2d(x, (7, 7)) on NCHW: output cell (i, j) is the mean of rows
[floor(i H / 7), ceil((i + 1) H / 7)) and columns [floor(j W / 7), ceil((j + 1) W / 7)); when 7
does not divide H or W the windows differ in size and overlap.

Each program owns BLOCK_P whole (n, c) planes and computes their 49 outputs as one
[BLOCK_P, 64] tile (49 cells padded to 64 lanes). Window bounds depend only on the cell, so they
are computed once per lane; the sum then runs over the largest window (KH_MAX x KW_MAX taps,
known in the wrapper from H and W) with each lane masking the taps outside its own window. A
plane is small (20 x 20 floats at the task's large shape), so the overlapping taps hit L1 and x
is read from DRAM about once; the float32 sum is divided by the lane's own window size and
rounded once.
"""
import torch
import triton
import triton.language as tl

OUT = 7
BLOCK_P = 16  # planes per program


@triton.jit
def _adaptive_avg_kernel(x_ptr, y_ptr, planes, C, H, W, stride_n, stride_c, stride_h, stride_w,
                         OUT: tl.constexpr, BLOCK_P: tl.constexpr, CELLS: tl.constexpr,
                         KH_MAX: tl.constexpr, KW_MAX: tl.constexpr):
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    p_ok = p < planes
    cell = tl.arange(0, CELLS)
    cell_ok = cell < OUT * OUT
    oh = cell // OUT
    ow = cell % OUT
    h0 = (oh * H) // OUT
    h1 = ((oh + 1) * H + OUT - 1) // OUT
    w0 = (ow * W) // OUT
    w1 = ((ow + 1) * W + OUT - 1) // OUT
    n = p // C
    c = p % C
    base = x_ptr + n.to(tl.int64) * stride_n + c.to(tl.int64) * stride_c
    ok = p_ok[:, None] & cell_ok[None, :]
    acc = tl.zeros((BLOCK_P, CELLS), dtype=tl.float32)
    for kh in tl.static_range(KH_MAX):
        h = h0 + kh
        for kw in tl.static_range(KW_MAX):
            w = w0 + kw
            tap_ok = ok & ((h < h1) & (w < w1))[None, :]
            v = tl.load(base[:, None] + (h * stride_h + w * stride_w)[None, :], mask=tap_ok, other=0.0)
            acc += v.to(tl.float32)
    count = ((h1 - h0) * (w1 - w0)).to(tl.float32)
    y = acc / count[None, :]
    tl.store(y_ptr + p[:, None].to(tl.int64) * (OUT * OUT) + cell[None, :], y.to(y_ptr.dtype.element_ty), mask=ok)


def _max_window(size):
    return max(-(-((i + 1) * size) // OUT) - (i * size) // OUT for i in range(OUT))


def kernel_function(x):
    N, C, H, W = x.shape
    y = torch.empty((N, C, OUT, OUT), dtype=x.dtype, device=x.device)
    planes = N * C
    if planes == 0:
        return y
    assert H > 0 and W > 0, "empty planes have no average"
    grid = (triton.cdiv(planes, BLOCK_P),)
    _adaptive_avg_kernel[grid](x, y, planes, C, H, W, x.stride(0), x.stride(1), x.stride(2), x.stride(3),
                               OUT=OUT, BLOCK_P=BLOCK_P, CELLS=64, KH_MAX=_max_window(H), KW_MAX=_max_window(W),
                               num_warps=8)
    return y
