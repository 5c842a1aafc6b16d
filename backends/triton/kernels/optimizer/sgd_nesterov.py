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
def _sgd_nesterov_steps(p_ptr, g_ptr, b_ptr, p_out, b_out, n, num_steps, lr, momentum, weight_decay,
                        BLOCK: tl.constexpr, RNE_BF16: tl.constexpr):
    # All steps in registers: param and buffer read once and written once, each gradient read
    # once; float32 arithmetic whatever the storage dtype.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    buf = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    for k in range(0, num_steps):
        g = tl.load(g_ptr + k * n + offs, mask=mask, other=0.0).to(tl.float32)
        g = g + weight_decay * p
        buf = momentum * buf + g
        p = p - lr * (g + momentum * buf)
    if RNE_BF16:
        p = _round_to_bf16_rne(p)
        buf = _round_to_bf16_rne(buf)
    tl.store(p_out + offs, p.to(p_out.dtype.element_ty), mask=mask)
    tl.store(b_out + offs, buf.to(b_out.dtype.element_ty), mask=mask)


def kernel_function(param, grads, momentum_buffer, lr, momentum, weight_decay):
    param = param.contiguous()
    grads = grads.contiguous()
    momentum_buffer = momentum_buffer.contiguous()
    n = param.numel()
    p_out = torch.empty_like(param)
    b_out = torch.empty_like(momentum_buffer)
    if n == 0:
        return p_out, b_out
    BLOCK = 1024
    _sgd_nesterov_steps[(triton.cdiv(n, BLOCK),)](
        param, grads, momentum_buffer, p_out, b_out, n, grads.shape[0], float(lr), float(momentum), float(weight_decay),
        BLOCK=BLOCK, RNE_BF16=param.device.type == "cpu" and param.dtype == torch.bfloat16, num_warps=4)
    return p_out, b_out
