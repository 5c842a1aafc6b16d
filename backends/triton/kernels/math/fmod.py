"""torch.fmod(x, y) of two contiguous tensors: x - n y with n = trunc(x / y), the sign of x, exact.

fmod is exact in IEEE arithmetic, and the task's quotients reach 2^22, so a float32
x - trunc(x / y) * y gets n wrong or loses the low bits. Here the operands are widened to float64:
n = trunc(x / y) there is off by at most one, n y is exact (n < 2^29 and y's 24-bit significand
fit in 53 bits) and so is x - n y (a multiple of y's quantum below 2 |y|), and one correction step
(|r| >= |y|, or a sign opposite to x) fixes an off-by-one n. The result is then exactly
representable in the input dtype, so the final conversion is exact. Exact for |x / y| < 2^29,
beyond the task's 2^22. C's special values by selects: y = 0 or x = +-inf -> NaN, y = +-inf -> x,
NaN -> NaN; a zero result keeps x's sign. Streamed flat (BLOCK elements per program); the float64
work (a division and a few operations per element) stays under the memory time on an H100.
"""
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _fmod_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    xf = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    yf = tl.load(y_ptr + offs, mask=mask, other=1.0).to(tl.float32)
    x = xf.to(tl.float64)
    y = yf.to(tl.float64)
    q = x / y
    k = tl.where(q >= 0.0, tl.floor(q), tl.ceil(q))
    r = x - k * y
    ay = tl.abs(y)
    r = tl.where(tl.abs(r) >= ay, tl.where(r > 0.0, r - ay, r + ay), r)
    r = tl.where((r != 0.0) & ((r < 0.0) != (x < 0.0)), tl.where(x < 0.0, r - ay, r + ay), r)
    r = tl.where(r == 0.0, x * 0.0, r)  # +-0 with the sign of x
    r = tl.where(ay == float("inf"), x, r)
    r = tl.where((y == 0.0) | (tl.abs(x) == float("inf")) | (x != x) | (y != y), float("nan"), r)
    tl.store(out_ptr + offs, r.to(tl.float32).to(out_ptr.dtype.element_ty), mask=mask)


def kernel_function(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    _fmod_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK, num_warps=4)
    return out
