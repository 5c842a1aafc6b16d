"""log|Gamma(x)| of a contiguous tensor: near the poles at 0, -1, ..., near the roots 1 and 2 and up
to x = 1e6.

Float32 math (bfloat16 widened), all branches evaluated and selected per element:
  * x < 0: reflection lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x), with the argument reduced
    exactly (r = x - round(x)) and pi / |sin(pi r)| = 1 / (|r| S(pi r)), S = sin(t)/t by its
    Taylor polynomial on |t| <= pi/2: no fast GPU sine, full accuracy next to a pole;
  * z >= 8 (z = x or 1 - x): Stirling's series (z - 1/2) log z - z + log(2 pi)/2 + 1/(12z) -
    1/(360z^3) + 1/(1260z^5) - 1/(1680z^7), truncation below 1e-9 at z = 8;
  * z < 8: shifted into [2, 3) with lgamma(z) = lgamma(z + 1) - log z (at most two steps up) or
    lgamma(z) = lgamma(z - 1) + log(z - 1) (at most five down), the factors multiplied and taken
    through one log; on [2, 3) lgamma(2 + d) = d P(d), P a degree-9 polynomial (this project's
    least-squares fit against mpmath, 1e-7 absolute in float32), so the root at 2 is exact and
    the root at 1 (d -> 1 + d, minus log(1 + d)) keeps an absolute error of ~1e-7;
  * non-positive integers (poles, -0 included) give +inf.
The contract's atol is absolute (1e-5): the reductions above keep every region at a few 1e-7
absolute, or within rtol 1e-4 where |lgamma| is large. Streamed flat (BLOCK elements per program).
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _lgamma_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0).to(tl.float32)
    neg = x < 0.0
    z = tl.where(neg, 1.0 - x, x)
    # Stirling for z >= 8
    iz = 1.0 / z
    iz2 = iz * iz
    corr = iz * (0.08333333333333333 - iz2 * (0.002777777777777778 - iz2 * (0.0007936507936507937 - iz2 * 0.0005952380952380953)))
    stirling = (z - 0.5) * tl.log(z) - z + 0.9189385332046728 + corr
    # z < 8: shift into [2, 3)
    y = z
    up = tl.full((BLOCK,), 1.0, tl.float32)
    for _ in tl.static_range(2):
        m = y < 2.0
        up = tl.where(m, up * y, up)
        y = tl.where(m, y + 1.0, y)
    down = tl.full((BLOCK,), 1.0, tl.float32)
    for _ in tl.static_range(5):
        m = y >= 3.0
        down = tl.where(m, down * (y - 1.0), down)
        y = tl.where(m, y - 1.0, y)
    d = y - 2.0
    p = 1.4882106150643863e-05
    p = p * d - 0.00010748652660644905
    p = p * d + 0.00040259599177614727
    p = p * d - 0.001127297055431488
    p = p * d + 0.0028646400619449118
    p = p * d - 0.007379184139766303
    p = p * d + 0.0205798981653612
    p = p * d - 0.06735223468875016
    p = p * d + 0.32246703154994644
    p = p * d + 0.42278433510713986
    small = d * p + tl.log(down / up)
    lg = tl.where(z >= 8.0, stirling, small)
    # reflection for x < 0: log(pi / |sin(pi x)|) = -log(|r| S(pi r))
    r = x - tl.floor(x + 0.5)
    t = 3.141592653589793 * r
    u = t * t
    s = 1.0 + u * (-0.16666666666666666 + u * (0.008333333333333333 + u * (-0.0001984126984126984 + u * (2.7557319223985893e-06 + u * (-2.505210838544172e-08 + u * 1.6059043836821613e-10)))))
    lg = tl.where(neg, -tl.log(tl.abs(r) * s) - lg, lg)
    lg = tl.where((x <= 0.0) & (r == 0.0), float("inf"), lg)
    tl.store(y_ptr + offs, lg.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x):
    y = torch.empty_like(x)
    n = x.numel()
    _lgamma_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=4)
    return y
