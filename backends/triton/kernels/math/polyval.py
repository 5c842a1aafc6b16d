"""Degree-7 polynomial sum_k coeffs[k] x^k of x [R, C] (Horner), coeffs [8] on the device.

A memory-bound elementwise op, streamed flat (BLOCK elements per program). Each program loads the
eight coefficients once as scalars (they stay in L1/L2 for all programs) and runs Horner's rule in
float32, rounding once to the output dtype: for bfloat16 inputs that is more accurate than the
torch expression evaluated in bfloat16, and the contract compares against float64.
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048
DEGREE = 7


@triton.jit
def _polyval_kernel(x_ptr, c_ptr, y_ptr, n, DEGREE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.zeros((BLOCK,), tl.float32) + tl.load(c_ptr + DEGREE).to(tl.float32)
    for k in tl.static_range(DEGREE - 1, -1, -1):
        y = y * x + tl.load(c_ptr + k).to(tl.float32)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x, coeffs):
    y = torch.empty_like(x)
    n = x.numel()
    _polyval_kernel[(triton.cdiv(n, BLOCK),)](x, coeffs, y, n, DEGREE=DEGREE, BLOCK=BLOCK, num_warps=4)
    return y
