import torch
import triton
import triton.language as tl

MAX_FUSED = 8192  # rows up to this many keys are held in registers: one read of scores and mask
LOOP_BLOCK = 2048  # longer rows: an online max/sum pass, then a write pass


@triton.jit
def _masked_softmax_kernel(s_ptr, m_ptr, p_ptr, H, S, stride_mb, stride_mh, stride_mq,
                           BLOCK: tl.constexpr, SINGLE: tl.constexpr):
    # Programs run head-fastest, so the H rows that share one mask row are neighbours in time
    # and the mask is read from DRAM about once. z = scores + mask is formed in float32.
    pid = tl.program_id(0).to(tl.int64)
    h = pid % H
    q = (pid // H) % S
    b = pid // (H * S)
    s_row = s_ptr + ((b * H + h) * S + q) * S
    p_row = p_ptr + ((b * H + h) * S + q) * S
    m_row = m_ptr + b * stride_mb + h * stride_mh + q * stride_mq
    cols = tl.arange(0, BLOCK)
    if SINGLE:
        ok = cols < S
        z = tl.load(s_row + cols, mask=ok, other=0.0).to(tl.float32) \
            + tl.load(m_row + cols, mask=ok, other=float("-inf")).to(tl.float32)
        mx = tl.max(z, axis=0)
        e = tl.where(z > float("-inf"), tl.exp(z - mx), 0.0)
        total = tl.sum(e, axis=0)
        # A fully masked row has total == 0: its defined output is all zeros, not 0/0.
        inv = tl.where(total > 0.0, 1.0 / total, 0.0)
        tl.store(p_row + cols, (e * inv).to(p_ptr.dtype.element_ty), mask=ok)
    else:
        # Per-lane online statistics; lanes that have seen only -inf keep (m=-inf, l=0).
        m_vec = tl.full((BLOCK,), float("-inf"), tl.float32)
        l_vec = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, S, BLOCK):
            offs = start + cols
            ok = offs < S
            z = tl.load(s_row + offs, mask=ok, other=0.0).to(tl.float32) \
                + tl.load(m_row + offs, mask=ok, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m_vec, z)
            live = m_new > float("-inf")
            alpha = tl.where(live, tl.exp(m_vec - m_new), 0.0)
            l_vec = l_vec * alpha + tl.where(live, tl.exp(z - m_new), 0.0)
            m_vec = m_new
        mx = tl.max(m_vec, axis=0)
        total = tl.sum(tl.where(m_vec > float("-inf"), l_vec * tl.exp(m_vec - mx), 0.0), axis=0)
        inv = tl.where(total > 0.0, 1.0 / total, 0.0)
        for start in range(0, S, BLOCK):
            offs = start + cols
            ok = offs < S
            z = tl.load(s_row + offs, mask=ok, other=0.0).to(tl.float32) \
                + tl.load(m_row + offs, mask=ok, other=float("-inf")).to(tl.float32)
            p = tl.where(z > float("-inf"), tl.exp(z - mx) * inv, 0.0)
            tl.store(p_row + offs, p.to(p_ptr.dtype.element_ty), mask=ok)


def kernel_function(scores, mask):
    scores = scores.contiguous()
    mask = mask.contiguous()
    B, H, S, S2 = scores.shape
    assert S == S2 and mask.shape[-1] == S and mask.shape[-2] == S
    p = torch.empty_like(scores)
    if scores.numel() == 0:
        return p
    # The mask broadcasts over heads (size-1 head dim) and, if given so, over the batch.
    stride_mb = mask.stride(0) if mask.shape[0] != 1 else 0
    stride_mh = mask.stride(1) if mask.shape[1] != 1 else 0
    single = triton.next_power_of_2(S) <= MAX_FUSED
    BLOCK = triton.next_power_of_2(S) if single else LOOP_BLOCK
    num_warps = 4 if BLOCK <= 1024 else (8 if BLOCK <= 4096 else 16)
    _masked_softmax_kernel[(B * H * S,)](scores, mask, p, H, S, stride_mb, stride_mh, mask.stride(2),
                                         BLOCK=BLOCK, SINGLE=single, num_warps=num_warps)
    return p
