"""Grouped-query attention, non-causal: O = softmax(Q K^T * scale) V, query head h reading KV head h // (Hq / Hkv).

Flash-attention style: one program per (block of BLOCK_M queries, batch * query head) keeps its
Q tile in registers and streams its KV head's K and V in BLOCK_N-key tiles with an online
softmax (running max m, sum l and the unnormalised float32 output, rescaled by
exp2(m_old - m_new); logits in the log2 domain with scale * log2(e) folded into one multiply).
The [Sq, Sk] scores never reach memory. The G query heads of a group read the same K/V rows,
and their programs are adjacent in launch order (batch * head is the fastest grid index), so a
KV tile fetched from DRAM for one head is served from L2 to the rest of its group. Full key
tiles run without a mask; only a ragged last tile masks keys past Sk (its -inf logits give
exactly 0 weight; the first tile always has a real key, so the running max is finite from the
start). For 16-bit inputs the probabilities are rounded to the input dtype for the P V
tensor-core product (inside the half-precision tolerances); float32 uses IEEE products
throughout.
"""
import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def _attend_tile(acc, m_i, l_i, q, k_ptrs, v_ptrs, offs_n, n0, SK, qk_scale,
                 MASK: tl.constexpr, d_ok, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    n = n0 + offs_n
    kv_mask = (n < SK)[:, None] & d_ok[None, :]
    k = tl.load(k_ptrs, mask=kv_mask, other=0.0)
    v = tl.load(v_ptrs, mask=kv_mask, other=0.0)
    if UPCAST:
        # Triton interpreter only: its tl.dot mishandles bfloat16 operands; exact fp32 copies.
        k = k.to(tl.float32)
        v = v.to(tl.float32)
    if IEEE or UPCAST:
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * qk_scale
    else:
        s = tl.dot(q, tl.trans(k)) * qk_scale
    if MASK:
        s = tl.where((n < SK)[None, :], s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    alpha = tl.exp2(m_i - m_new)
    p = tl.exp2(s - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, axis=1)
    if IEEE or UPCAST:
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
    else:
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
    return acc, m_new, l_i


@triton.jit
def _gqa_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, HQ, G, SQ, SK, D, qk_scale,
                          stride_qb, stride_qh, stride_qs, stride_kb, stride_kh, stride_ks,
                          stride_vb, stride_vh, stride_vs, stride_ob, stride_oh, stride_os,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D_PAD: tl.constexpr,
                          IEEE: tl.constexpr, UPCAST: tl.constexpr):
    bh = tl.program_id(0)
    pid_m = tl.program_id(1)
    b = (bh // HQ).to(tl.int64)
    h = (bh % HQ).to(tl.int64)
    kvh = h // G
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D_PAD)
    d_ok = offs_d < D
    q = tl.load(q_ptr + b * stride_qb + h * stride_qh + offs_m[:, None].to(tl.int64) * stride_qs + offs_d[None, :],
                mask=(offs_m < SQ)[:, None] & d_ok[None, :], other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    k_ptrs = k_ptr + b * stride_kb + kvh * stride_kh + offs_n[:, None].to(tl.int64) * stride_ks + offs_d[None, :]
    v_ptrs = v_ptr + b * stride_vb + kvh * stride_vh + offs_n[:, None].to(tl.int64) * stride_vs + offs_d[None, :]

    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D_PAD), dtype=tl.float32)
    full = SK - SK % BLOCK_N
    for n0 in range(0, full, BLOCK_N):
        acc, m_i, l_i = _attend_tile(acc, m_i, l_i, q, k_ptrs + n0 * stride_ks, v_ptrs + n0 * stride_vs,
                                     offs_n, n0, SK, qk_scale, False, d_ok, IEEE, UPCAST)
    for n0 in range(full, SK, BLOCK_N):  # the ragged last tile, if any
        acc, m_i, l_i = _attend_tile(acc, m_i, l_i, q, k_ptrs + n0 * stride_ks, v_ptrs + n0 * stride_vs,
                                     offs_n, n0, SK, qk_scale, True, d_ok, IEEE, UPCAST)
    o = acc / l_i[:, None]
    o_ptrs = o_ptr + b * stride_ob + h * stride_oh + offs_m[:, None].to(tl.int64) * stride_os + offs_d[None, :]
    tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=(offs_m < SQ)[:, None] & d_ok[None, :])


def kernel_function(q, k, v, scale):
    B, HQ, SQ, D = q.shape
    HKV, SK = k.shape[1], k.shape[2]
    assert HQ % HKV == 0, "query heads must be a multiple of KV heads"
    o = torch.empty((B, HQ, SQ, D), dtype=q.dtype, device=q.device)
    if o.numel() == 0:
        return o
    assert q.stride(3) == 1 and k.stride(3) == 1 and v.stride(3) == 1, "head rows must be contiguous"
    ieee = q.dtype == torch.float32
    if ieee:
        # IEEE float32 on the FMA units, whose dot keeps operand rows in registers: 32 x 64 tiles
        # over 8 warps compile without spills at D = 128 (64 x 32 over 4 warps spill ~7 KiB)
        BLOCK_M, BLOCK_N, warps, stages = 32, 64, 8, 2
    else:
        BLOCK_M, BLOCK_N, warps, stages = 128, 64, 8, 3
    # batch * head on axis 0 (may exceed 65535 in general), query blocks on axis 1
    grid = (B * HQ, triton.cdiv(SQ, BLOCK_M))
    _gqa_attention_kernel[grid](
        q, k, v, o, HQ, HQ // HKV, SQ, SK, D, float(scale) * LOG2E,
        q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, D_PAD=max(16, triton.next_power_of_2(D)),
        IEEE=ieee, UPCAST=q.device.type == "cpu" and q.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    return o
