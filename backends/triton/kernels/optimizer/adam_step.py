import torch
import triton
import triton.language as tl


@triton.jit
def _adam_steps_kernel(p_ptr, g_ptr, m_ptr, v_ptr, p_out, m_out, v_out, n, num_steps,
                       lr, beta1, beta2, one_minus_beta1, one_minus_beta2, bc1, bc2, eps,
                       BLOCK: tl.constexpr):
    # All steps in registers: each element's param and moments are read once and written once,
    # and every gradient is read once; the arithmetic is fp32 whatever the storage dtype.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    m = tl.load(m_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    for k in range(0, num_steps):
        g = tl.load(g_ptr + k * n + offs, mask=mask, other=0.0).to(tl.float32)
        # Bias corrections 1 - beta^t by the recurrence 1 - beta^(t+1) = (1 - beta) + beta (1 - beta^t):
        # no cancellation, unlike computing beta^t in fp32 and subtracting it from 1.
        bc1 = one_minus_beta1 + beta1 * bc1
        bc2 = one_minus_beta2 + beta2 * bc2
        m = m + one_minus_beta1 * (g - m)
        v = beta2 * v + one_minus_beta2 * (g * g)
        denom = tl.sqrt(v) / tl.sqrt(bc2) + eps
        p = p - (lr / bc1) * (m / denom)
    tl.store(p_out + offs, p.to(p_out.dtype.element_ty), mask=mask)
    tl.store(m_out + offs, m.to(m_out.dtype.element_ty), mask=mask)
    tl.store(v_out + offs, v.to(v_out.dtype.element_ty), mask=mask)


def kernel_function(param, grads, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps):
    param = param.contiguous()
    grads = grads.contiguous()
    exp_avg = exp_avg.contiguous()
    exp_avg_sq = exp_avg_sq.contiguous()
    n = param.numel()
    num_steps = grads.shape[0]
    p_out = torch.empty_like(param)
    m_out = torch.empty_like(exp_avg)
    v_out = torch.empty_like(exp_avg_sq)
    if n == 0:
        return p_out, m_out, v_out
    # Scalar hyperparameter set-up in Python double precision (as torch.optim.Adam does on the
    # host): 1 - beta and the bias corrections 1 - beta^step of the steps already taken.
    step = int(step)
    BLOCK = 1024
    _adam_steps_kernel[(triton.cdiv(n, BLOCK),)](
        param, grads, exp_avg, exp_avg_sq, p_out, m_out, v_out, n, num_steps,
        float(lr), float(beta1), float(beta2), 1.0 - float(beta1), 1.0 - float(beta2),
        1.0 - float(beta1) ** step, 1.0 - float(beta2) ** step, float(eps),
        BLOCK=BLOCK, num_warps=4,
    )
    return p_out, m_out, v_out
