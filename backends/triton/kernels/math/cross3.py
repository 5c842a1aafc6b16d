import torch
import triton
import triton.language as tl

BLOCK = 512  # vectors per program


@triton.jit
def _cross3_kernel(a_ptr, b_ptr, out_ptr, N, BLOCK: tl.constexpr):
    # Rows of 3 contiguous components (stride 3): three strided loads per operand; neighbouring
    # programs' accesses share cache lines, so DRAM traffic stays one read of each operand.
    rows = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = rows < N
    base = rows * 3
    a0 = tl.load(a_ptr + base, mask=mask, other=0.0).to(tl.float32)
    a1 = tl.load(a_ptr + base + 1, mask=mask, other=0.0).to(tl.float32)
    a2 = tl.load(a_ptr + base + 2, mask=mask, other=0.0).to(tl.float32)
    b0 = tl.load(b_ptr + base, mask=mask, other=0.0).to(tl.float32)
    b1 = tl.load(b_ptr + base + 1, mask=mask, other=0.0).to(tl.float32)
    b2 = tl.load(b_ptr + base + 2, mask=mask, other=0.0).to(tl.float32)
    ty = out_ptr.dtype.element_ty
    tl.store(out_ptr + base, (a1 * b2 - a2 * b1).to(ty), mask=mask)
    tl.store(out_ptr + base + 1, (a2 * b0 - a0 * b2).to(ty), mask=mask)
    tl.store(out_ptr + base + 2, (a0 * b1 - a1 * b0).to(ty), mask=mask)


def kernel_function(a, b):
    a = a.contiguous()
    b = b.contiguous()
    N = a.shape[0]
    out = torch.empty_like(a)
    if N:
        _cross3_kernel[(triton.cdiv(N, BLOCK),)](a, b, out, N, BLOCK=BLOCK, num_warps=4)
    return out
