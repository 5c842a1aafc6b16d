"""Qwen3-style QK-norm + RoPE: per-head RMSNorm over D with a [D] weight, then rotate-half rotary embedding.

q [B, S, Hq, D] and k [B, S, Hkv, D] keep their layout. One program per token: it looks up the
token's position once, loads its cos and sin rows (D/2 each) once for all q and k heads, and
processes all heads of q, then of k, as [heads, D/2] tiles of the two halves x1 = x[:D/2],
x2 = x[D/2:]. Per head: rstd = rsqrt(mean(x1^2 + x2^2) + eps), n = x * rstd * w, then
y1 = n1 cos - n2 sin and y2 = n2 cos + n1 sin. Everything between the loads and the two stores
is float32 (the normalised values are not rounded before the rotation), and each token's q and
k rows are read once and written once, contiguously.
"""
import torch
import triton
import triton.language as tl

EPS = 1e-6  # Qwen3's rms_norm_eps


@triton.jit
def _norm_rotate_heads(x_row, y_row, w_ptr, c, s, NH, HALF, eps, NH_PAD: tl.constexpr, HALF_PAD: tl.constexpr):
    # The NH heads of one token (each 2 * HALF contiguous elements) at x_row, written to y_row.
    hd = tl.arange(0, NH_PAD)[:, None]
    d = tl.arange(0, HALF_PAD)[None, :]
    d_ok = d < HALF
    mask = (hd < NH) & d_ok
    offs = hd * (2 * HALF) + d
    x1 = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_row + offs + HALF, mask=mask, other=0.0).to(tl.float32)
    w1 = tl.load(w_ptr + d, mask=d_ok, other=0.0).to(tl.float32)
    w2 = tl.load(w_ptr + HALF + d, mask=d_ok, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x1 * x1 + x2 * x2, axis=1) / (2 * HALF) + eps)[:, None]
    n1 = x1 * rstd * w1
    n2 = x2 * rstd * w2
    tl.store(y_row + offs, (n1 * c - n2 * s).to(y_row.dtype.element_ty), mask=mask)
    tl.store(y_row + offs + HALF, (n2 * c + n1 * s).to(y_row.dtype.element_ty), mask=mask)


@triton.jit
def _qk_rmsnorm_rope_kernel(q_ptr, k_ptr, qw_ptr, kw_ptr, pos_ptr, cos_ptr, sin_ptr, qo_ptr, ko_ptr,
                            S, HQ, HKV, HALF, eps,
                            stride_qb, stride_qs, stride_kb, stride_ks, stride_pb, stride_ps, stride_cp, stride_sp,
                            stride_qob, stride_qos, stride_kob, stride_kos,
                            HQ_PAD: tl.constexpr, HKV_PAD: tl.constexpr, HALF_PAD: tl.constexpr):
    tok = tl.program_id(0)
    b = (tok // S).to(tl.int64)
    t = (tok % S).to(tl.int64)
    pos = tl.load(pos_ptr + b * stride_pb + t * stride_ps)
    d = tl.arange(0, HALF_PAD)
    d_ok = d < HALF
    c = tl.load(cos_ptr + pos * stride_cp + d, mask=d_ok, other=0.0).to(tl.float32)[None, :]
    s = tl.load(sin_ptr + pos * stride_sp + d, mask=d_ok, other=0.0).to(tl.float32)[None, :]
    _norm_rotate_heads(q_ptr + b * stride_qb + t * stride_qs, qo_ptr + b * stride_qob + t * stride_qos, qw_ptr,
                       c, s, HQ, HALF, eps, HQ_PAD, HALF_PAD)
    _norm_rotate_heads(k_ptr + b * stride_kb + t * stride_ks, ko_ptr + b * stride_kob + t * stride_kos, kw_ptr,
                       c, s, HKV, HALF, eps, HKV_PAD, HALF_PAD)


def kernel_function(q, k, q_weight, k_weight, positions, cos_table, sin_table):
    B, S, HQ, D = q.shape
    HKV = k.shape[2]
    assert D % 2 == 0 and q.stride(3) == 1 and q.stride(2) == D and k.stride(3) == 1 and k.stride(2) == D, \
        "each token's heads must be contiguous"
    assert cos_table.stride(1) == 1 and sin_table.stride(1) == 1
    q_out = torch.empty((B, S, HQ, D), dtype=q.dtype, device=q.device)
    k_out = torch.empty((B, S, HKV, D), dtype=k.dtype, device=k.device)
    if B * S == 0:
        return q_out, k_out
    HALF = D // 2
    HQ_PAD = triton.next_power_of_2(HQ)
    HALF_PAD = triton.next_power_of_2(HALF)
    _qk_rmsnorm_rope_kernel[(B * S,)](
        q, k, q_weight, k_weight, positions, cos_table, sin_table, q_out, k_out, S, HQ, HKV, HALF, EPS,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), positions.stride(0), positions.stride(1),
        cos_table.stride(0), sin_table.stride(0), q_out.stride(0), q_out.stride(1), k_out.stride(0), k_out.stride(1),
        HQ_PAD=HQ_PAD, HKV_PAD=triton.next_power_of_2(HKV), HALF_PAD=HALF_PAD,
        num_warps=4 if HQ_PAD * HALF_PAD <= 1024 else 8,
    )
    return q_out, k_out
