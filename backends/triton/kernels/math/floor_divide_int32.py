"""torch.floor_divide(a, b) of two int32 tensors: floor(a / b), not C's truncation.

Integer arithmetic only (a float32 quotient has 24 bits and rounds full-range dividends): the
truncating quotient q = a // b (Triton's integer division, as in C) is moved down by one where
the remainder r = a - q b is nonzero and has the sign opposite to b, which is exactly where
truncation and floor differ. Streamed flat (BLOCK elements per program): two int32 loads and one
store per element, the division (a short instruction sequence on a GPU) is hidden under them.
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _floor_divide_kernel(a_ptr, b_ptr, q_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    q = a // b
    r = a - q * b
    q = tl.where((r != 0) & ((r ^ b) < 0), q - 1, q)
    tl.store(q_ptr + offs, q, mask=mask)


def kernel_function(a, b):
    q = torch.empty_like(a)
    n = a.numel()
    _floor_divide_kernel[(triton.cdiv(n, BLOCK),)](a, b, q, n, BLOCK=BLOCK, num_warps=4)
    return q
