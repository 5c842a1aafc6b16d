"""Attention probabilities P = softmax(Q K^T * scale + mask) per head, with an additive [B, 1, Sq, Sk] mask.

The output is the full [B, H, Sq, Sk] probability tensor, so writing it is the unavoidable cost;
what a fused kernel saves is the float32 logit tensor the unfused form writes and reads back
(twice: the softmax's max and sum passes). One program per (block of BLOCK_M queries,
batch * head) makes two passes over the keys with its Q tile in registers:
1. the logits of each key tile (tl.dot, float32, log2 domain: scale * log2(e) folded in, the
   mask tile added times log2(e)) update a running row max and sum of exp2 (online softmax);
2. the logits are recomputed tile by tile (Q K^T is cheap next to the write of P) and
   exp2(z - max) / sum is stored, rounded once to the input dtype.
K and the mask are read twice per query block, mostly from L2. Masked keys (-inf) get exactly 0;
a row whose tiles so far are all masked keeps a finite shift (0), so no -inf - -inf appears.
float32 inputs use IEEE products (tl.dot's default would be TF32).
"""
import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def _logit_tile(q, k_ptrs, m_ptrs, n, SK, row_ok, d_ok, qk_scale, log2e, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    k = tl.load(k_ptrs, mask=(n < SK)[:, None] & d_ok[None, :], other=0.0)
    if UPCAST:
        # Triton interpreter only: its tl.dot mishandles bfloat16 operands; exact fp32 copies.
        k = k.to(tl.float32)
    if IEEE or UPCAST:
        s = tl.dot(q, tl.trans(k), input_precision="ieee")
    else:
        s = tl.dot(q, tl.trans(k))
    bias = tl.load(m_ptrs, mask=row_ok[:, None] & (n < SK)[None, :], other=float("-inf")).to(tl.float32)
    return s * qk_scale + bias * log2e


@triton.jit
def _attention_softmax_kernel(q_ptr, k_ptr, mask_ptr, p_ptr, H, SQ, SK, D, qk_scale, log2e,
                              stride_qb, stride_qh, stride_qs, stride_kb, stride_kh, stride_ks,
                              stride_mb, stride_mq, stride_mk, stride_pb, stride_ph, stride_pq,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D_PAD: tl.constexpr,
                              IEEE: tl.constexpr, UPCAST: tl.constexpr):
    bh = tl.program_id(0)
    pid_m = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = (bh % H).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D_PAD)
    row_ok = offs_m < SQ
    d_ok = offs_d < D
    q = tl.load(q_ptr + b * stride_qb + h * stride_qh + offs_m[:, None].to(tl.int64) * stride_qs + offs_d[None, :],
                mask=row_ok[:, None] & d_ok[None, :], other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    k_ptrs = k_ptr + b * stride_kb + h * stride_kh + offs_n[:, None].to(tl.int64) * stride_ks + offs_d[None, :]
    m_ptrs = mask_ptr + b * stride_mb + offs_m[:, None].to(tl.int64) * stride_mq + offs_n[None, :] * stride_mk

    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for n0 in range(0, SK, BLOCK_N):
        s = _logit_tile(q, k_ptrs + n0 * stride_ks, m_ptrs + n0 * stride_mk, n0 + offs_n, SK, row_ok, d_ok,
                        qk_scale, log2e, IEEE, UPCAST)
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        l_i = l_i * tl.exp2(m_i - shift) + tl.sum(tl.exp2(s - shift[:, None]), axis=1)
        m_i = m_new
    inv_l = 1.0 / l_i

    p_ptrs = p_ptr + b * stride_pb + h * stride_ph + offs_m[:, None].to(tl.int64) * stride_pq + offs_n[None, :]
    for n0 in range(0, SK, BLOCK_N):
        s = _logit_tile(q, k_ptrs + n0 * stride_ks, m_ptrs + n0 * stride_mk, n0 + offs_n, SK, row_ok, d_ok,
                        qk_scale, log2e, IEEE, UPCAST)
        p = tl.exp2(s - m_i[:, None]) * inv_l[:, None]
        tl.store(p_ptrs + n0, p.to(p_ptr.dtype.element_ty), mask=row_ok[:, None] & (n0 + offs_n < SK)[None, :])


def kernel_function(q, k, mask, scale):
    B, H, SQ, D = q.shape
    SK = k.shape[2]
    p = torch.empty((B, H, SQ, SK), dtype=q.dtype, device=q.device)
    if p.numel() == 0:
        return p
    assert q.stride(3) == 1 and k.stride(3) == 1, "head rows must be contiguous"
    D_PAD = max(16, triton.next_power_of_2(D))
    # float32 IEEE dots keep operand rows in registers: halve the query tile for wide heads
    BLOCK_M, BLOCK_N = (32 if q.dtype == torch.float32 and D_PAD > 64 else 64), 64
    grid = (B * H, triton.cdiv(SQ, BLOCK_M))
    _attention_softmax_kernel[grid](
        q, k, mask, p, H, SQ, SK, D, float(scale) * LOG2E, LOG2E,
        q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
        mask.stride(0), mask.stride(2), mask.stride(3), p.stride(0), p.stride(1), p.stride(2),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, D_PAD=D_PAD,
        IEEE=q.dtype == torch.float32, UPCAST=q.device.type == "cpu" and q.dtype == torch.bfloat16,
        num_warps=8, num_stages=3,  # 4 warps spill registers for float32 at these tiles
    )
    return p
