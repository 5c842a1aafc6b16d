import torch
import triton
import triton.language as tl

MAX_FUSED = 8192  # rows up to this many keys are held in registers: one read of the scores
LOOP_BLOCK = 2048  # longer rows: an online max/sum pass over the visible keys, then a write pass
LOG2E = 1.4426950408889634


@triton.jit
def _causal_softmax_kernel(s_ptr, p_ptr, Sq, Sk, qk_scale_log2,
                           BLOCK: tl.constexpr, SINGLE: tl.constexpr):
    # One program per (batch, head, query) row. The queries are the last Sq of Sk positions:
    # query i sees keys j <= i + Sk - Sq. Masked scores are never read; their outputs are 0.
    # exp(x * scale) is computed as exp2(x * scale * log2(e)) in float32.
    row = tl.program_id(0).to(tl.int64)
    i = row % Sq
    n_vis = i + Sk - Sq + 1  # visible keys: 1 .. Sk
    s_row = s_ptr + row * Sk
    p_row = p_ptr + row * Sk
    cols = tl.arange(0, BLOCK)
    if SINGLE:
        vis = cols < n_vis
        z = tl.load(s_row + cols, mask=vis, other=float("-inf")).to(tl.float32) * qk_scale_log2
        z = tl.where(vis, z, float("-inf"))
        m = tl.max(z, axis=0)
        e = tl.where(vis, tl.exp2(z - m), 0.0)
        p = e / tl.sum(e, axis=0)
        tl.store(p_row + cols, p.to(p_ptr.dtype.element_ty), mask=cols < Sk)
    else:
        # Per-lane online softmax statistics over the visible keys, combined at the end.
        m_vec = tl.full((BLOCK,), float("-inf"), tl.float32)
        l_vec = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, n_vis, BLOCK):
            offs = start + cols
            vis = offs < n_vis
            z = tl.load(s_row + offs, mask=vis, other=float("-inf")).to(tl.float32) * qk_scale_log2
            z = tl.where(vis, z, float("-inf"))
            m_new = tl.maximum(m_vec, z)
            live = m_new > float("-inf")
            alpha = tl.where(live, tl.exp2(m_vec - m_new), 0.0)
            l_vec = l_vec * alpha + tl.where(live, tl.exp2(z - m_new), 0.0)
            m_vec = m_new
        m = tl.max(m_vec, axis=0)
        l_sum = tl.sum(tl.where(m_vec > float("-inf"), l_vec * tl.exp2(m_vec - m), 0.0), axis=0)
        inv = 1.0 / l_sum
        for start in range(0, Sk, BLOCK):
            offs = start + cols
            vis = offs < n_vis
            z = tl.load(s_row + offs, mask=vis, other=float("-inf")).to(tl.float32) * qk_scale_log2
            p = tl.where(vis, tl.exp2(z - m) * inv, 0.0)
            tl.store(p_row + offs, p.to(p_ptr.dtype.element_ty), mask=offs < Sk)


def kernel_function(scores, scale):
    scores = scores.contiguous()
    Sq, Sk = scores.shape[-2], scores.shape[-1]
    p = torch.empty_like(scores)
    if scores.numel() == 0:
        return p
    rows = scores.numel() // Sk
    single = triton.next_power_of_2(Sk) <= MAX_FUSED
    BLOCK = triton.next_power_of_2(Sk) if single else LOOP_BLOCK
    num_warps = 4 if BLOCK <= 1024 else (8 if BLOCK <= 4096 else 16)
    _causal_softmax_kernel[(rows,)](scores, p, Sq, Sk, float(scale) * LOG2E,
                                    BLOCK=BLOCK, SINGLE=single, num_warps=num_warps)
    return p
