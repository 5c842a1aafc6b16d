"""Mamba's causal_conv1d_fn with SiLU: y[b, d, t] = silu(bias[d] + sum_k w[d, k] x[b, d, t - (W-1) + k]).

Depthwise, so each (batch, channel) row is independent. A program owns a [BLOCK_R rows,
BLOCK_L positions] tile: long rows (the large shape's L = 4096) are split along time, short rows
(the decode-like shapes) are packed several to a program so that every program still moves a
few KiB. For each of the W taps it loads the shifted window of x it needs (the W - 1 extra
positions at a tile's left edge come from the neighbouring tile, through L1) and the tap's
per-row weight; positions before t = 0 are masked to zero, the causal zero history. The sum is
float32 and rounded once after the SiLU. W is a compile-time constant (4 in Mamba), so the tap
loop is unrolled.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK_L = 1024
TILE = 4096  # outputs per program


@triton.jit
def _causal_conv1d_silu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, R, D, L,
                               stride_xb, stride_xd, stride_xl, stride_wd, stride_wk, stride_yb, stride_yd,
                               WIDTH: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_L: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)  # row = b * D + d
    row_ok = rows < R
    b = (rows // D).to(tl.int64)
    d = rows % D
    t = tl.program_id(1) * BLOCK_L + tl.arange(0, BLOCK_L)
    x_rows = x_ptr + (b * stride_xb + d.to(tl.int64) * stride_xd)[:, None]
    acc = tl.zeros((BLOCK_R, BLOCK_L), dtype=tl.float32) + \
        tl.load(b_ptr + d, mask=row_ok, other=0.0).to(tl.float32)[:, None]
    for k in tl.static_range(WIDTH):
        src = t - (WIDTH - 1) + k
        xv = tl.load(x_rows + src[None, :] * stride_xl, mask=row_ok[:, None] & ((src >= 0) & (src < L))[None, :],
                     other=0.0).to(tl.float32)
        wk = tl.load(w_ptr + d * stride_wd + k * stride_wk, mask=row_ok, other=0.0).to(tl.float32)
        acc += wk[:, None] * xv
    y = acc / (1.0 + tl.exp(-acc))
    y_ptrs = y_ptr + (b * stride_yb + d.to(tl.int64) * stride_yd)[:, None] + t[None, :]
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=row_ok[:, None] & (t < L)[None, :])


def kernel_function(x, weight, bias):
    B, D, L = x.shape
    width = weight.shape[-1]
    y = torch.empty((B, D, L), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    BLOCK_L = min(triton.next_power_of_2(L), MAX_BLOCK_L)
    BLOCK_R = max(1, TILE // BLOCK_L)
    grid = (triton.cdiv(B * D, BLOCK_R), triton.cdiv(L, BLOCK_L))
    _causal_conv1d_silu_kernel[grid](x, weight, bias, y, B * D, D, L,
                                     x.stride(0), x.stride(1), x.stride(2), weight.stride(0), weight.stride(1),
                                     y.stride(0), y.stride(1),
                                     WIDTH=width, BLOCK_R=BLOCK_R, BLOCK_L=BLOCK_L, num_warps=8)
    return y
