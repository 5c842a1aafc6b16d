"""Split a fused QKV projection into head-major q, k, v and apply rotate-half RoPE to q and k.

qkv [B, S, (Hq + 2 Hkv) D] -> q [B, Hq, S, D], k and v [B, Hkv, S, D], with cos/sin rows chosen
by each token's position id. One program per token: it looks up the token's position once,
loads its cos and sin rows (D/2 each) once for all heads, and moves the whole token row (every
q, k and v head) in a few [heads, D/2] tiles. Rotation pairs dimension i with i + D/2, so each
head is handled as its two halves x1, x2: y1 = x1 cos - x2 sin, y2 = x2 cos + x1 sin, in float32
and rounded once; v is a plain copy. The input row is read contiguously and every head lands in
one contiguous D-element run of its output, so loads and stores are coalesced on both sides.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _rotate_heads(src, dst, dst_stride_h, c, s, NH, HALF, NH_PAD: tl.constexpr, HALF_PAD: tl.constexpr):
    # src: the first of NH heads of this token (each 2 * HALF contiguous elements); dst: the same
    # token's row of the first output head, heads dst_stride_h apart.
    hd = tl.arange(0, NH_PAD)[:, None]
    d = tl.arange(0, HALF_PAD)[None, :]
    mask = (hd < NH) & (d < HALF)
    x1 = tl.load(src + hd * (2 * HALF) + d, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(src + hd * (2 * HALF) + HALF + d, mask=mask, other=0.0).to(tl.float32)
    out = dst + hd.to(tl.int64) * dst_stride_h + d
    tl.store(out, (x1 * c - x2 * s).to(dst.dtype.element_ty), mask=mask)
    tl.store(out + HALF, (x2 * c + x1 * s).to(dst.dtype.element_ty), mask=mask)


@triton.jit
def _qkv_split_rope_kernel(qkv_ptr, pos_ptr, cos_ptr, sin_ptr, q_ptr, k_ptr, v_ptr, S, HQ, HKV, HALF,
                           stride_xb, stride_xs, stride_pb, stride_ps, stride_cp, stride_sp,
                           stride_qb, stride_qh, stride_qs, stride_kb, stride_kh, stride_ks,
                           stride_vb, stride_vh, stride_vs,
                           HQ_PAD: tl.constexpr, HKV_PAD: tl.constexpr, HALF_PAD: tl.constexpr):
    tok = tl.program_id(0)
    b = (tok // S).to(tl.int64)
    t = (tok % S).to(tl.int64)
    pos = tl.load(pos_ptr + b * stride_pb + t * stride_ps)
    d = tl.arange(0, HALF_PAD)
    d_ok = d < HALF
    c = tl.load(cos_ptr + pos * stride_cp + d, mask=d_ok, other=0.0).to(tl.float32)[None, :]
    s = tl.load(sin_ptr + pos * stride_sp + d, mask=d_ok, other=0.0).to(tl.float32)[None, :]
    row = qkv_ptr + b * stride_xb + t * stride_xs
    D = 2 * HALF
    _rotate_heads(row, q_ptr + b * stride_qb + t * stride_qs, stride_qh, c, s, HQ, HALF, HQ_PAD, HALF_PAD)
    _rotate_heads(row + HQ * D, k_ptr + b * stride_kb + t * stride_ks, stride_kh, c, s, HKV, HALF, HKV_PAD, HALF_PAD)
    hd = tl.arange(0, HKV_PAD)[:, None]
    dd = tl.arange(0, 2 * HALF_PAD)[None, :]
    vmask = (hd < HKV) & (dd < D)
    v = tl.load(row + (HQ + HKV) * D + hd * D + dd, mask=vmask, other=0.0)
    tl.store(v_ptr + b * stride_vb + t * stride_vs + hd.to(tl.int64) * stride_vh + dd, v, mask=vmask)


def kernel_function(qkv, positions, cos_cache, sin_cache, n_q_heads, n_kv_heads):
    B, S, width = qkv.shape
    D = width // (n_q_heads + 2 * n_kv_heads)
    assert D % 2 == 0 and qkv.stride(2) == 1 and cos_cache.stride(1) == 1 and sin_cache.stride(1) == 1
    q = torch.empty((B, n_q_heads, S, D), dtype=qkv.dtype, device=qkv.device)
    k = torch.empty((B, n_kv_heads, S, D), dtype=qkv.dtype, device=qkv.device)
    v = torch.empty((B, n_kv_heads, S, D), dtype=qkv.dtype, device=qkv.device)
    if B * S == 0:
        return q, k, v
    HALF = D // 2
    HQ_PAD = triton.next_power_of_2(n_q_heads)
    HALF_PAD = triton.next_power_of_2(HALF)
    _qkv_split_rope_kernel[(B * S,)](
        qkv, positions, cos_cache, sin_cache, q, k, v, S, n_q_heads, n_kv_heads, HALF,
        qkv.stride(0), qkv.stride(1), positions.stride(0), positions.stride(1),
        cos_cache.stride(0), sin_cache.stride(0),
        q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        HQ_PAD=HQ_PAD, HKV_PAD=triton.next_power_of_2(n_kv_heads), HALF_PAD=HALF_PAD,
        num_warps=4 if HQ_PAD * HALF_PAD <= 1024 else 8,
    )
    return q, k, v
