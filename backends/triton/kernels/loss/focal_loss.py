"""Element-wise sigmoid focal loss (RetinaNet), alpha 0.25, gamma 2, reduction='none', of logits
and targets [N, C].

A memory-bound elementwise op, streamed flat (BLOCK elements per program; C = 80 or 3 would waste
lanes in a row layout), float32 math rounded once. With e = exp(-|x|) (never overflows):
  * ce = max(x, 0) - x t + log1p(e), the stable BCE-with-logits (log1p by Goldberg's trick, so
    tiny e keep their relative accuracy); logits of +-100 are fine;
  * 1 - p_t = t sigmoid(-x) + (1 - t) sigmoid(x), formed directly from e instead of as 1 - p_t:
    for confident predictions p_t rounds to 1 in float32 and 1 - p_t would lose every digit of
    the small modulating factor;
  * loss = alpha_t ce (1 - p_t)^2, alpha_t = alpha t + (1 - alpha)(1 - t).
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048
ALPHA = 0.25


@triton.jit
def _focal_loss_kernel(x_ptr, t_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    t = tl.load(t_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    e = tl.exp(-tl.abs(x))
    w = 1.0 + e
    log1p_e = tl.where(w == 1.0, e, tl.log(w) * (e / (w - 1.0)))
    ce = tl.maximum(x, 0.0) - x * t + log1p_e
    sig_abs = 1.0 / w        # sigmoid(|x|)
    sig_neg_abs = e / w      # sigmoid(-|x|)
    sig_pos = tl.where(x >= 0.0, sig_abs, sig_neg_abs)   # sigmoid(x)
    sig_neg = tl.where(x >= 0.0, sig_neg_abs, sig_abs)   # sigmoid(-x) = 1 - sigmoid(x)
    one_minus_pt = t * sig_neg + (1.0 - t) * sig_pos
    alpha_t = alpha * t + (1.0 - alpha) * (1.0 - t)
    loss = alpha_t * ce * one_minus_pt * one_minus_pt
    tl.store(out_ptr + offs, loss.to(out_ptr.dtype.element_ty), mask=mask)


def kernel_function(logits, target):
    out = torch.empty_like(logits)
    n = logits.numel()
    _focal_loss_kernel[(triton.cdiv(n, BLOCK),)](logits, target, out, n, ALPHA, BLOCK=BLOCK, num_warps=4)
    return out
