import torch
import triton
import triton.language as tl

MAX_TILE = 4096  # elements of one half-tile [BLOCK_H, BLOCK_HALF] per program


@triton.jit
def _rope_kernel(x_ptr, cos_ptr, sin_ptr, y_ptr, S, H, HALF, stride_cs,
                 BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    # One program per (token, block of heads): the token's cos/sin row is loaded once and reused
    # by every head. Each head is split into halves x1 = x[:D/2], x2 = x[D/2:]:
    #   y1 = x1 * cos1 - x2 * sin1,  y2 = x2 * cos2 + x1 * sin2.
    tok = tl.program_id(0).to(tl.int64)  # b * S + s
    s = tok % S
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    d = tl.arange(0, BLOCK_HALF)
    d_ok = d < HALF
    mask = (heads < H)[:, None] & d_ok[None, :]
    c1 = tl.load(cos_ptr + s * stride_cs + d, mask=d_ok, other=0.0).to(tl.float32)[None, :]
    c2 = tl.load(cos_ptr + s * stride_cs + HALF + d, mask=d_ok, other=0.0).to(tl.float32)[None, :]
    s1 = tl.load(sin_ptr + s * stride_cs + d, mask=d_ok, other=0.0).to(tl.float32)[None, :]
    s2 = tl.load(sin_ptr + s * stride_cs + HALF + d, mask=d_ok, other=0.0).to(tl.float32)[None, :]
    offs = tok * H * 2 * HALF + heads[:, None] * (2 * HALF) + d[None, :]
    x1 = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + offs + HALF, mask=mask, other=0.0).to(tl.float32)
    y1 = x1 * c1 - x2 * s1
    y2 = x2 * c2 + x1 * s2
    tl.store(y_ptr + offs, y1.to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(y_ptr + offs + HALF, y2.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x, cos, sin):
    x = x.contiguous()
    cos = cos.contiguous()
    sin = sin.contiguous()
    B, S, H, D = x.shape
    assert D % 2 == 0, "rotate-half needs an even head_dim"
    assert cos.shape == (S, D) and sin.shape == (S, D)
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    half = D // 2
    BLOCK_HALF = triton.next_power_of_2(half)
    BLOCK_H = min(triton.next_power_of_2(H), max(1, MAX_TILE // BLOCK_HALF))
    num_warps = 4 if BLOCK_H * BLOCK_HALF <= 2048 else 8
    grid = (B * S, triton.cdiv(H, BLOCK_H))
    _rope_kernel[grid](x, cos, sin, y, S, H, half, cos.stride(0),
                       BLOCK_H=BLOCK_H, BLOCK_HALF=BLOCK_HALF, num_warps=num_warps)
    return y
