"""Label-smoothed cross entropy per row with ignore_index: F.cross_entropy(..., label_smoothing=eps, reduction="none").

  loss[n] = (1 - eps) (lse - z[t]) + eps (lse - mean_v z[v]),   0 where t == -100

One program per row streams the row once with an online softmax in float32 scalars: m (running
max), Z = sum exp(z - m) and S = sum (z - m), both rebased when the max grows (S by
count_so_far * (m_old - m_new)). Then lse - z[t] = m + log Z - z[t] and lse - mean z =
log Z - S / V: the smoothing term is a sum of values relative to the max, with no cancellation
between a large lse and a large mean. m starts at the row's first element, so every update is
finite. Ignored rows still stream their row (a branch would not save their bandwidth on a GPU
where rows run concurrently) and store 0. The loss is rounded once to the logits dtype.
"""
import torch
import triton
import triton.language as tl

IGNORE_INDEX = -100
MAX_BLOCK = 4096


@triton.jit
def _smoothed_ce_kernel(x_ptr, t_ptr, loss_ptr, V, stride_xn, stride_xv, smoothing,
                        IGNORE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xn
    cols = tl.arange(0, BLOCK)
    m = tl.load(x_row).to(tl.float32)
    z_sum = 0.0
    s_sum = 0.0
    for start in range(0, V, BLOCK):
        offs = start + cols
        ok = offs < V
        z = tl.load(x_row + offs * stride_xv, mask=ok, other=0.0).to(tl.float32)
        m_new = tl.maximum(m, tl.max(tl.where(ok, z, float("-inf")), axis=0))
        s_sum = s_sum + start * (m - m_new) + tl.sum(tl.where(ok, z - m_new, 0.0), axis=0)
        z_sum = tl.exp(m - m_new) * z_sum + tl.sum(tl.where(ok, tl.exp(z - m_new), 0.0), axis=0)
        m = m_new
    log_z = tl.log(z_sum)
    tgt = tl.load(t_ptr + row)
    keep = tgt != IGNORE
    z_t = tl.load(x_row + tgt * stride_xv, mask=keep, other=0.0).to(tl.float32)
    nll = m + log_z - z_t
    smooth = log_z - s_sum / V
    loss = tl.where(keep, (1.0 - smoothing) * nll + smoothing * smooth, 0.0)
    tl.store(loss_ptr + row, loss.to(loss_ptr.dtype.element_ty))


def kernel_function(logits, target, label_smoothing):
    N, V = logits.shape
    loss = torch.empty((N,), dtype=logits.dtype, device=logits.device)
    if N == 0:
        return loss
    BLOCK = min(triton.next_power_of_2(V), MAX_BLOCK)
    num_warps = 4 if BLOCK <= 1024 else 8
    _smoothed_ce_kernel[(N,)](logits, target, loss, V, logits.stride(0), logits.stride(1), float(label_smoothing),
                              IGNORE=IGNORE_INDEX, BLOCK=BLOCK, num_warps=num_warps)
    return loss
