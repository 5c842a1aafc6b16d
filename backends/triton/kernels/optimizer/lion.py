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
def _lion_steps(p_ptr, g_ptr, m_ptr, p_out, m_out, n, num_steps, lr, beta1, beta2, decay,
                BLOCK: tl.constexpr, RNE_BF16: tl.constexpr):
    # All steps in registers; float32 arithmetic whatever the storage dtype.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    m = tl.load(m_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    for k in range(0, num_steps):
        g = tl.load(g_ptr + k * n + offs, mask=mask, other=0.0).to(tl.float32)
        c = beta1 * m + (1.0 - beta1) * g
        sign = tl.where(c > 0, 1.0, tl.where(c < 0, -1.0, 0.0))
        p = p * decay - lr * sign  # decay = 1 - lr * weight_decay
        m = beta2 * m + (1.0 - beta2) * g
    if RNE_BF16:
        p = _round_to_bf16_rne(p)
        m = _round_to_bf16_rne(m)
    tl.store(p_out + offs, p.to(p_out.dtype.element_ty), mask=mask)
    tl.store(m_out + offs, m.to(m_out.dtype.element_ty), mask=mask)


def kernel_function(param, grads, exp_avg, lr, beta1, beta2, weight_decay):
    param = param.contiguous()
    grads = grads.contiguous()
    exp_avg = exp_avg.contiguous()
    n = param.numel()
    p_out = torch.empty_like(param)
    m_out = torch.empty_like(exp_avg)
    if n == 0:
        return p_out, m_out
    BLOCK = 1024
    _lion_steps[(triton.cdiv(n, BLOCK),)](
        param, grads, exp_avg, p_out, m_out, n, grads.shape[0], float(lr), float(beta1), float(beta2),
        1.0 - float(lr) * float(weight_decay),
        BLOCK=BLOCK, RNE_BF16=param.device.type == "cpu" and param.dtype == torch.bfloat16, num_warps=4)
    return p_out, m_out
