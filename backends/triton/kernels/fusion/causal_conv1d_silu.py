"""Mamba's causal_conv1d_fn with SiLU: y[b, d, t] = silu(bias[d] + sum_k w[d, k] x[b, d, t - (W-1) + k]).

Depthwise, so each (batch, channel) row is independent: a program owns BLOCK_L outputs of one
row and loads the W shifted windows of x it needs (the W - 1 extra elements at the left edge
come from the neighbouring block, through L1). Positions before t = 0 are masked to zero, the
causal zero history. The W taps and the bias are loaded once per program as scalars; the sum is
float32 and rounded once after the SiLU. W is a compile-time constant (4 in Mamba), so the tap
loop is unrolled.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK_L = 1024


@triton.jit
def _causal_conv1d_silu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, D, L,
                               stride_xb, stride_xd, stride_xl, stride_wd, stride_wk, stride_yb, stride_yd,
                               WIDTH: tl.constexpr, BLOCK_L: tl.constexpr):
    row = tl.program_id(0)
    b = (row // D).to(tl.int64)
    d = row % D
    t = tl.program_id(1) * BLOCK_L + tl.arange(0, BLOCK_L)
    x_row = x_ptr + b * stride_xb + d.to(tl.int64) * stride_xd
    acc = tl.zeros((BLOCK_L,), dtype=tl.float32) + tl.load(b_ptr + d).to(tl.float32)
    for k in tl.static_range(WIDTH):
        src = t - (WIDTH - 1) + k
        xv = tl.load(x_row + src * stride_xl, mask=(src >= 0) & (src < L), other=0.0).to(tl.float32)
        acc += tl.load(w_ptr + d * stride_wd + k * stride_wk).to(tl.float32) * xv
    y = acc / (1.0 + tl.exp(-acc))
    tl.store(y_ptr + b * stride_yb + d.to(tl.int64) * stride_yd + t, y.to(y_ptr.dtype.element_ty), mask=t < L)


def kernel_function(x, weight, bias):
    B, D, L = x.shape
    width = weight.shape[-1]
    y = torch.empty((B, D, L), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    BLOCK_L = min(triton.next_power_of_2(L), MAX_BLOCK_L)
    num_warps = 4 if BLOCK_L <= 512 else 8
    grid = (B * D, triton.cdiv(L, BLOCK_L))
    _causal_conv1d_silu_kernel[grid](x, weight, bias, y, D, L,
                                     x.stride(0), x.stride(1), x.stride(2), weight.stride(0), weight.stride(1),
                                     y.stride(0), y.stride(1),
                                     WIDTH=width, BLOCK_L=BLOCK_L, num_warps=num_warps)
    return y
