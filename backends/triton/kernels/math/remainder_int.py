"""torch.remainder(a, b) of two integer tensors (int32 or int64): r = a - b floor(a / b), with the
sign of the divisor b (Python's %), not C's sign of a.

Integer arithmetic only (a float quotient rounds full-range dividends): C's remainder a % b
(Triton's integer %, truncating like C) is shifted by b where it is nonzero and its sign differs
from b's, which is exactly where the two conventions disagree. Streamed flat (BLOCK elements per
program); the same code serves int32 and int64 (the pointer dtypes select the instructions).
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _remainder_kernel(a_ptr, b_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    r = a % b
    r = tl.where((r != 0) & ((r ^ b) < 0), r + b, r)
    tl.store(r_ptr + offs, r, mask=mask)


def kernel_function(a, b):
    r = torch.empty_like(a)
    n = a.numel()
    _remainder_kernel[(triton.cdiv(n, BLOCK),)](a, b, r, n, BLOCK=BLOCK, num_warps=4)
    return r
