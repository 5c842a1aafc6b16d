"""Several Adagrad steps (torch.optim.Adagrad, single-tensor semantics, maximize=False) fused into
one pass over a flat parameter: for each step t = step + 1 .. step + S with that step's gradient g,
    g = g + weight_decay * param
    clr = lr / (1 + (t - 1) * lr_decay)
    state_sum = state_sum + g^2
    param = param - clr * g / (sqrt(state_sum) + eps)
Returns (param, state_sum) as new tensors.

Memory-bound and element-wise: each program streams BLOCK elements, reads param, state_sum and
the S gradients once, runs all S steps on float32 registers and writes both outputs once, rather
than one read-modify-write sweep per step (7 tensor passes instead of 15 for S = 3). The state
stays in float32 between steps, so half-precision inputs are rounded once, at the end.
"""
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _adagrad_kernel(param_ptr, grads_ptr, state_ptr, param_out_ptr, state_out_ptr, n, stride_g, STEPS,
                    step, lr, lr_decay, weight_decay, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(param_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(state_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g_ptrs = grads_ptr + offs
    for k in range(0, STEPS):
        g = tl.load(g_ptrs, mask=mask, other=0.0).to(tl.float32)
        g_ptrs += stride_g  # 64-bit pointer arithmetic: k * stride_g could pass 2^31
        g = g + weight_decay * p
        clr = lr / (1.0 + (step + k) * lr_decay)  # t - 1 = step + k
        s = s + g * g
        p = p - clr * g / (tl.sqrt(s) + eps)
    tl.store(param_out_ptr + offs, p.to(param_out_ptr.dtype.element_ty), mask=mask)
    tl.store(state_out_ptr + offs, s.to(state_out_ptr.dtype.element_ty), mask=mask)


def kernel_function(param, grads, state_sum, step, lr, lr_decay, weight_decay, eps):
    n = param.numel()
    assert param.stride(0) == 1 and state_sum.stride(0) == 1 and grads.stride(1) == 1, "flat contiguous tensors expected"
    param_out = torch.empty_like(param)
    state_out = torch.empty_like(state_sum)
    if n == 0:
        return param_out, state_out
    _adagrad_kernel[(triton.cdiv(n, BLOCK),)](param, grads, state_sum, param_out, state_out, n, grads.stride(0),
                                              grads.shape[0], step, lr, lr_decay, weight_decay, eps,
                                              BLOCK=BLOCK, num_warps=4)
    return param_out, state_out
