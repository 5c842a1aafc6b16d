import torch
import triton
import triton.language as tl


@triton.jit
def _bernoulli(p_ptr, y_ptr, n, seed, BLOCK: tl.constexpr):
    # y = 1 where a Philox uniform u in [0, 1) falls below p: P(y = 1) = p to float32 resolution
    # (u has 24 significant bits near 1, so p = 1 - 2^-11 keeps its 2^-11 chance of a 0), p = 0
    # never gives 1 and p = 1 always does.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    p = tl.minimum(tl.maximum(p, 0.0), 1.0)
    u = tl.rand(seed, offs)
    y = tl.where(u < p, 1.0, 0.0)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(p, seed):
    p = p.contiguous()
    y = torch.empty_like(p)
    n = p.numel()
    if n == 0:
        return y
    assert n < 2 ** 31, "Philox offsets are 32-bit here"
    BLOCK = 1024
    _bernoulli[(triton.cdiv(n, BLOCK),)](p, y, n, seed, BLOCK=BLOCK, num_warps=4)
    return y
