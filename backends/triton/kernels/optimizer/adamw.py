import torch
import triton
import triton.language as tl


@triton.jit
def _round_to_bf16_rne(x):
    # float32 -> nearest bfloat16 value (ties to even), still as float32. Only for the Triton
    # interpreter, whose float32 -> bfloat16 cast truncates; on GPUs the cast rounds to nearest.
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _adamw_steps(p_ptr, g_ptr, m_ptr, v_ptr, p_out, m_out, v_out, n, num_steps,
                 lr, beta1, beta2, one_minus_beta1, one_minus_beta2, bc1, bc2, eps, decay,
                 BLOCK: tl.constexpr, RNE_BF16: tl.constexpr):
    # All steps in registers: each element's param and moments are read once and written once,
    # every gradient is read once; float32 arithmetic whatever the storage dtype.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    m = tl.load(m_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    for k in range(0, num_steps):
        g = tl.load(g_ptr + k * n + offs, mask=mask, other=0.0).to(tl.float32)
        # bias corrections 1 - beta^t by the recurrence 1 - beta^(t+1) = (1 - beta) + beta (1 - beta^t)
        bc1 = one_minus_beta1 + beta1 * bc1
        bc2 = one_minus_beta2 + beta2 * bc2
        p = p * decay  # decoupled weight decay, 1 - lr * weight_decay
        m = m + one_minus_beta1 * (g - m)
        v = beta2 * v + one_minus_beta2 * (g * g)
        denom = tl.sqrt(v) / tl.sqrt(bc2) + eps
        p = p - (lr / bc1) * (m / denom)
    if RNE_BF16:
        p = _round_to_bf16_rne(p)
        m = _round_to_bf16_rne(m)
        v = _round_to_bf16_rne(v)
    tl.store(p_out + offs, p.to(p_out.dtype.element_ty), mask=mask)
    tl.store(m_out + offs, m.to(m_out.dtype.element_ty), mask=mask)
    tl.store(v_out + offs, v.to(v_out.dtype.element_ty), mask=mask)


def kernel_function(param, grads, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay):
    param = param.contiguous()
    grads = grads.contiguous()
    exp_avg = exp_avg.contiguous()
    exp_avg_sq = exp_avg_sq.contiguous()
    n = param.numel()
    p_out = torch.empty_like(param)
    m_out = torch.empty_like(exp_avg)
    v_out = torch.empty_like(exp_avg_sq)
    if n == 0:
        return p_out, m_out, v_out
    # Scalar set-up in Python double precision, as torch.optim.AdamW does on the host.
    step = int(step)
    BLOCK = 1024
    _adamw_steps[(triton.cdiv(n, BLOCK),)](
        param, grads, exp_avg, exp_avg_sq, p_out, m_out, v_out, n, grads.shape[0],
        float(lr), float(beta1), float(beta2), 1.0 - float(beta1), 1.0 - float(beta2),
        1.0 - float(beta1) ** step, 1.0 - float(beta2) ** step, float(eps), 1.0 - float(lr) * float(weight_decay),
        BLOCK=BLOCK, RNE_BF16=param.device.type == "cpu" and param.dtype == torch.bfloat16, num_warps=4)
    return p_out, m_out, v_out
