import torch
import triton
import triton.language as tl


@triton.jit
def _cross_entropy_kernel(logits_ptr, target_ptr, loss_ptr, V, stride, ignore_index,
                          BLOCK: tl.constexpr):
    # One program per row: an online (running max, rescaled sum) logsumexp over BLOCK-wide
    # chunks of the row, kept per lane and combined at the end; loss = logsumexp - logit[target].
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * stride
    cols = tl.arange(0, BLOCK)
    # A finite sentinel keeps exp(m_old - m_new) well defined on lanes that only saw padding.
    m = tl.full((BLOCK,), -3.0e38, tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, V, BLOCK):
        c = start + cols
        x = tl.load(base + c, mask=c < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - row_max), axis=0)
    lse = row_max + tl.log(total)
    t = tl.load(target_ptr + row)
    keep = t != ignore_index
    x_t = tl.load(base + t, mask=keep, other=0.0).to(tl.float32)
    loss = tl.where(keep, lse - x_t, 0.0)
    tl.store(loss_ptr + row, loss.to(loss_ptr.dtype.element_ty))


def kernel_function(logits, target):
    logits = logits.contiguous()
    target = target.contiguous()
    n, v = logits.shape
    loss = torch.empty((n,), dtype=logits.dtype, device=logits.device)
    BLOCK = min(triton.next_power_of_2(v), 2048)
    _cross_entropy_kernel[(n,)](logits, target, loss, v, logits.stride(0), -100, BLOCK=BLOCK, num_warps=8)
    return loss
