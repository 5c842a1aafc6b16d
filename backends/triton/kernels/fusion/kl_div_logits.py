"""Per-row KL(P || Q), P = softmax(target_logits), Q = softmax(logits): the fused distillation loss.

One program per row streams both rows once (the large shape reads 1 GiB; a max pass first
would double it) with online softmaxes kept as float32 scalars:
  teacher t: m_t, Z_t = sum e^(t - m_t), B = sum e^(t - m_t) (t - m_t)
  student s: m_s, Z_s = sum e^(s - m_s),  C = sum e^(t - m_t) (s - m_s)
each rebased when its max grows. Then
  kl = sum_v p_v [(t_v - m_t - log Z_t) - (s_v - m_s - log Z_s)] = (B - C) / Z_t - log Z_t + log Z_s,
a combination of sums relative to each row's own max, so the rows' large offsets (both sides
shifted by several units, differently) never enter as a difference of big numbers. The maxima
start at each row's first element, so all updates are finite arithmetic. Output float32 [N].
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK = 4096


@triton.jit
def _kl_logits_kernel(s_ptr, t_ptr, kl_ptr, V, stride_sn, stride_sv, stride_tn, stride_tv,
                      BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    s_row = s_ptr + row * stride_sn
    t_row = t_ptr + row * stride_tn
    cols = tl.arange(0, BLOCK)
    m_t = tl.load(t_row).to(tl.float32)
    m_s = tl.load(s_row).to(tl.float32)
    zt = 0.0
    zs = 0.0
    b = 0.0
    c = 0.0
    for start in range(0, V, BLOCK):
        offs = start + cols
        ok = offs < V
        t = tl.load(t_row + offs * stride_tv, mask=ok, other=0.0).to(tl.float32)
        s = tl.load(s_row + offs * stride_sv, mask=ok, other=0.0).to(tl.float32)
        mt_new = tl.maximum(m_t, tl.max(tl.where(ok, t, float("-inf")), axis=0))
        ms_new = tl.maximum(m_s, tl.max(tl.where(ok, s, float("-inf")), axis=0))
        alpha_t = tl.exp(m_t - mt_new)
        e = tl.where(ok, tl.exp(t - mt_new), 0.0)
        b = alpha_t * (b + zt * (m_t - mt_new)) + tl.sum(e * (t - mt_new), axis=0)
        c = alpha_t * (c + zt * (m_s - ms_new)) + tl.sum(e * (s - ms_new), axis=0)
        zt = alpha_t * zt + tl.sum(e, axis=0)
        zs = tl.exp(m_s - ms_new) * zs + tl.sum(tl.where(ok, tl.exp(s - ms_new), 0.0), axis=0)
        m_t = mt_new
        m_s = ms_new
    tl.store(kl_ptr + row, (b - c) / zt - tl.log(zt) + tl.log(zs))


def kernel_function(logits, target_logits):
    N, V = logits.shape
    kl = torch.empty((N,), dtype=torch.float32, device=logits.device)
    if N == 0:
        return kl
    BLOCK = min(triton.next_power_of_2(V), MAX_BLOCK)
    num_warps = 4 if BLOCK <= 1024 else 8
    _kl_logits_kernel[(N,)](logits, target_logits, kl, V, logits.stride(0), logits.stride(1),
                            target_logits.stride(0), target_logits.stride(1), BLOCK=BLOCK, num_warps=num_warps)
    return kl
