import torch
import triton
import triton.language as tl


@triton.jit
def _rmsprop_steps(p_ptr, g_ptr, sq_ptr, ga_ptr, buf_ptr, p_out, sq_out, ga_out, buf_out, n, stride_g,
                   lr, alpha, one_minus_alpha, eps, weight_decay, momentum,
                   NUM_STEPS: tl.constexpr, BLOCK: tl.constexpr):
    # All steps in registers: each element's param and three states are read once and written
    # once, every gradient is read once, and the arithmetic is fp32 whatever the storage dtype.
    # The step loop is unrolled so the gradient loads of all steps can be in flight together.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    sq = tl.load(sq_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    ga = tl.load(ga_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    buf = tl.load(buf_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g_ptrs = g_ptr + offs  # advanced by pointer arithmetic: 64-bit, however large n * steps is
    for _ in tl.static_range(NUM_STEPS):
        g = tl.load(g_ptrs, mask=mask, other=0.0).to(tl.float32) + weight_decay * p
        g_ptrs += stride_g
        sq = alpha * sq + one_minus_alpha * (g * g)
        ga = ga + one_minus_alpha * (g - ga)  # lerp(ga, g, 1 - alpha)
        # masked lanes hold zeros; eps keeps their division finite
        avg = tl.sqrt(sq - ga * ga) + eps
        buf = momentum * buf + g / avg
        p = p - lr * buf
    tl.store(p_out + offs, p.to(p_out.dtype.element_ty), mask=mask)
    tl.store(sq_out + offs, sq.to(sq_out.dtype.element_ty), mask=mask)
    tl.store(ga_out + offs, ga.to(ga_out.dtype.element_ty), mask=mask)
    tl.store(buf_out + offs, buf.to(buf_out.dtype.element_ty), mask=mask)


def kernel_function(param, grads, square_avg, grad_avg, momentum_buffer, lr, alpha, eps, weight_decay, momentum):
    param = param.contiguous()
    grads = grads.contiguous()
    square_avg = square_avg.contiguous()
    grad_avg = grad_avg.contiguous()
    momentum_buffer = momentum_buffer.contiguous()
    n = param.numel()
    # New tensors, as the reference returns updated clones and leaves its inputs untouched.
    p_out = torch.empty_like(param)
    sq_out = torch.empty_like(square_avg)
    ga_out = torch.empty_like(grad_avg)
    buf_out = torch.empty_like(momentum_buffer)
    if n == 0:
        return p_out, sq_out, ga_out, buf_out
    BLOCK = 1024
    _rmsprop_steps[(triton.cdiv(n, BLOCK),)](
        param, grads, square_avg, grad_avg, momentum_buffer, p_out, sq_out, ga_out, buf_out,
        n, grads.stride(0) if grads.shape[0] > 0 else 0,
        float(lr), float(alpha), 1.0 - float(alpha), float(eps), float(weight_decay), float(momentum),
        NUM_STEPS=grads.shape[0], BLOCK=BLOCK, num_warps=4,
    )
    return p_out, sq_out, ga_out, buf_out
