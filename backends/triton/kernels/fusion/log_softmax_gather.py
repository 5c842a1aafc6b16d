"""RL policy log-probs and entropy: logp[n] = log_softmax(z[n])[target[n]], ent[n] = -sum p log p, z = logits / T.

One program per row streams the row once (1 GiB of logits for the large shape: a second pass
would double the time) with an online softmax kept as three float32 scalars:
  m = running max of z,  Z = sum exp(z - m),  B = sum exp(z - m) * (z - m),
rescaled by alpha = exp(m_old - m_new) whenever the max grows (B also gains Z * (m_old - m_new)).
Then lse = m + log Z, logp = z[target] - lse and ent = log Z - B / Z. Writing the entropy through
B, a sum of terms relative to the max, avoids the cancellation of lse - E[z] when both are large
(rows carry offsets of several units). m starts at the row's first element, so every update is
finite arithmetic. The target logit is one scalar load; both outputs are float32.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK = 4096


@triton.jit
def _logprob_entropy_kernel(x_ptr, t_ptr, logp_ptr, ent_ptr, V, stride_xn, stride_xv, inv_temp,
                            BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xn
    cols = tl.arange(0, BLOCK)
    m = tl.load(x_row).to(tl.float32) * inv_temp
    z_sum = 0.0
    b_sum = 0.0
    for start in range(0, V, BLOCK):
        offs = start + cols
        ok = offs < V
        z = tl.load(x_row + offs * stride_xv, mask=ok, other=0.0).to(tl.float32) * inv_temp
        m_new = tl.maximum(m, tl.max(tl.where(ok, z, float("-inf")), axis=0))
        alpha = tl.exp(m - m_new)
        e = tl.where(ok, tl.exp(z - m_new), 0.0)
        b_sum = alpha * (b_sum + z_sum * (m - m_new)) + tl.sum(e * (z - m_new), axis=0)
        z_sum = alpha * z_sum + tl.sum(e, axis=0)
        m = m_new
    log_z = tl.log(z_sum)
    tgt = tl.load(t_ptr + row)
    z_t = tl.load(x_row + tgt * stride_xv).to(tl.float32) * inv_temp
    tl.store(logp_ptr + row, z_t - m - log_z)
    tl.store(ent_ptr + row, log_z - b_sum / z_sum)


def kernel_function(logits, target, temperature):
    N, V = logits.shape
    logp = torch.empty((N,), dtype=torch.float32, device=logits.device)
    ent = torch.empty((N,), dtype=torch.float32, device=logits.device)
    if N == 0:
        return logp, ent
    BLOCK = min(triton.next_power_of_2(V), MAX_BLOCK)
    num_warps = 4 if BLOCK <= 1024 else 8
    # z = x * (1/T) in float32: one rounding more than x / T, far inside the float32 tolerance.
    _logprob_entropy_kernel[(N,)](logits, target, logp, ent, V, logits.stride(0), logits.stride(1),
                                  1.0 / float(temperature), BLOCK=BLOCK, num_warps=num_warps)
    return logp, ent
