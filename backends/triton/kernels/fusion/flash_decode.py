import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
BLOCK_N = 64  # keys per inner step


@triton.jit
def _split_kernel(q_ptr, k_ptr, v_ptr, lens_ptr, m_ptr, l_ptr, acc_ptr,
                  HKV, NUM_SPLITS, D, qk_scale_log2,
                  stride_qb, stride_qh, stride_kb, stride_kh, stride_ks, stride_vb, stride_vh, stride_vs,
                  G: tl.constexpr, G_PAD: tl.constexpr, D_PAD: tl.constexpr, BLOCK_N: tl.constexpr,
                  SPLIT: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    # Flash-decoding, phase 1: program (b * Hkv + kv_head, split) runs an online softmax over keys
    # [split * SPLIT, min((split + 1) * SPLIT, L_b)) for the G query heads that share kv_head (one
    # read of K and V for the whole group: the G rows, padded to G_PAD >= 16, form the M side of
    # tl.dot). It writes the unnormalised partial output and its running max (log2 domain) and
    # sum. Rows past L_b are never loaded.
    pid = tl.program_id(0)
    split = tl.program_id(1)
    b = (pid // HKV).to(tl.int64)
    kvh = (pid % HKV).to(tl.int64)
    L = tl.load(lens_ptr + b)
    start = split * SPLIT
    end = tl.minimum(start + SPLIT, L)

    g = tl.arange(0, G_PAD)
    d = tl.arange(0, D_PAD)
    g_ok = g < G
    d_ok = d < D
    q_ptrs = q_ptr + b * stride_qb + (kvh * G + g)[:, None] * stride_qh + d[None, :]
    q = tl.load(q_ptrs, mask=g_ok[:, None] & d_ok[None, :], other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    k_base = k_ptr + b * stride_kb + kvh * stride_kh
    v_base = v_ptr + b * stride_vb + kvh * stride_vh

    m_i = tl.full((G_PAD,), float("-inf"), tl.float32)
    l_i = tl.zeros((G_PAD,), dtype=tl.float32)
    acc = tl.zeros((G_PAD, D_PAD), dtype=tl.float32)
    for n0 in range(start, end, BLOCK_N):
        n = n0 + tl.arange(0, BLOCK_N)
        n_ok = n < end
        kv_mask = n_ok[:, None] & d_ok[None, :]
        k = tl.load(k_base + n[:, None] * stride_ks + d[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_base + n[:, None] * stride_vs + d[None, :], mask=kv_mask, other=0.0)
        if UPCAST:
            # Triton interpreter only: its tl.dot mishandles 16-bit floats; fp32 copies are exact.
            k = k.to(tl.float32)
            v = v.to(tl.float32)
        if IEEE:
            s = tl.dot(q, tl.trans(k), input_precision="ieee")
        else:
            s = tl.dot(q, tl.trans(k))
        s = tl.where(n_ok[None, :], s * qk_scale_log2, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))  # finite: every step has a valid key
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if IEEE:
            acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        else:
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    h = kvh * G + g
    part = (b * (HKV * G) + h) * NUM_SPLITS + split  # index into [B, H, NUM_SPLITS]
    tl.store(m_ptr + part, m_i, mask=g_ok)
    tl.store(l_ptr + part, l_i, mask=g_ok)
    tl.store(acc_ptr + part[:, None] * D_PAD + d[None, :], acc, mask=g_ok[:, None])


@triton.jit
def _combine_kernel(m_ptr, l_ptr, acc_ptr, lens_ptr, o_ptr, H, NUM_SPLITS, D,
                    SPLIT: tl.constexpr, SPLITS_PAD: tl.constexpr, D_PAD: tl.constexpr):
    # Phase 2: program (b * H + h) merges the partial results of the splits that hold keys of
    # sequence b, weighting each by 2^(m_split - m_max).
    pid = tl.program_id(0).to(tl.int64)
    b = pid // H
    L = tl.load(lens_ptr + b)
    n_used = (L + SPLIT - 1) // SPLIT
    sp = tl.arange(0, SPLITS_PAD)
    used = sp < n_used
    m = tl.load(m_ptr + pid * NUM_SPLITS + sp, mask=used, other=float("-inf"))
    l = tl.load(l_ptr + pid * NUM_SPLITS + sp, mask=used, other=0.0)
    m_max = tl.max(m, axis=0)
    w = tl.where(used, tl.exp2(m - m_max), 0.0)
    denom = tl.sum(l * w, axis=0)
    d = tl.arange(0, D_PAD)
    acc = tl.load(acc_ptr + (pid * NUM_SPLITS + sp)[:, None] * D_PAD + d[None, :], mask=used[:, None], other=0.0)
    o = tl.sum(acc * w[:, None], axis=0) / denom
    tl.store(o_ptr + pid * D + d, o.to(o_ptr.dtype.element_ty), mask=d < D)


def kernel_function(q, k_cache, v_cache, seq_lens, scale):
    q = q.contiguous()
    k_cache = k_cache.contiguous()
    v_cache = v_cache.contiguous()
    seq_lens = seq_lens.contiguous()
    B, H, D = q.shape
    HKV, SMAX = k_cache.shape[1], k_cache.shape[2]
    G = H // HKV
    o = torch.empty_like(q)
    if q.numel() == 0:
        return o
    # Keys per split: about 16 splits for long caches (enough programs to fill a GPU at small
    # batch), never fewer keys than one inner step.
    SPLIT = max(BLOCK_N, min(1024, triton.next_power_of_2(triton.cdiv(SMAX, 16))))
    NUM_SPLITS = triton.cdiv(SMAX, SPLIT)
    G_PAD = max(16, triton.next_power_of_2(G))
    D_PAD = max(16, triton.next_power_of_2(D))
    m = torch.empty((B, H, NUM_SPLITS), dtype=torch.float32, device=q.device)
    l = torch.empty((B, H, NUM_SPLITS), dtype=torch.float32, device=q.device)
    acc = torch.empty((B, H, NUM_SPLITS, D_PAD), dtype=torch.float32, device=q.device)
    half = q.dtype in (torch.float16, torch.bfloat16)
    _split_kernel[(B * HKV, NUM_SPLITS)](
        q, k_cache, v_cache, seq_lens, m, l, acc, HKV, NUM_SPLITS, D, float(scale) * LOG2E,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        G=G, G_PAD=G_PAD, D_PAD=D_PAD, BLOCK_N=BLOCK_N, SPLIT=SPLIT,
        IEEE=q.dtype == torch.float32, UPCAST=q.device.type == "cpu" and half,
        num_warps=4, num_stages=2,
    )
    _combine_kernel[(B * H,)](m, l, acc, seq_lens, o, H, NUM_SPLITS, D,
                              SPLIT=SPLIT, SPLITS_PAD=max(2, triton.next_power_of_2(NUM_SPLITS)), D_PAD=D_PAD,
                              num_warps=4)
    return o
