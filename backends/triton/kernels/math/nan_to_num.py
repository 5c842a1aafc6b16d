"""torch.nan_to_num(x) with its defaults: NaN -> 0, +inf -> the dtype's largest finite value,
-inf -> its most negative finite value, every finite value unchanged.

A pure selection, streamed flat (BLOCK elements per program). The replacements are the output
dtype's finfo.max / finfo.min, passed in by the wrapper (they differ per dtype: 3.4028e38,
65504, 3.3895e38); all three are exact in float32, so selecting in float32 and converting back
is bit-exact for every input.
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _nan_to_num_kernel(x_ptr, y_ptr, n, big, small, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.where(x != x, 0.0, x)
    y = tl.where(x == float("inf"), big, y)
    y = tl.where(x == float("-inf"), small, y)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x):
    y = torch.empty_like(x)
    n = x.numel()
    fi = torch.finfo(x.dtype)
    _nan_to_num_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, fi.max, fi.min, BLOCK=BLOCK, num_warps=4)
    return y
