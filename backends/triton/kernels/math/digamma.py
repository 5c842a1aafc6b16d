"""digamma (psi) of a contiguous tensor: near the poles at 0, -1, ..., near the root 1.4616 and up
to x = 1e6.

Float32 math (bfloat16 widened), all branches evaluated and selected per element:
  * x < 0: reflection psi(x) = psi(1 - x) - pi cot(pi x). The argument is reduced exactly,
    r = x - round(x), and cot(pi r) = cos(pi r) / sin(pi r) from this file's own Taylor
    polynomials on |pi r| <= pi/2 (a GPU's fast sin/cos is too coarse next to a pole);
  * z = x (or 1 - x) is shifted up to z >= 6 with psi(z) = psi(z + 1) - 1/z (at most six steps,
    unrolled and masked), then the asymptotic series log z - 1/(2z) - sum B_2k / (2k z^2k)
    through z^-10 (truncation below 1e-10 at z = 6);
  * digamma(+0) = -inf (-0: +inf), negative integers NaN, as torch.
Near the root the result is a difference of O(1) terms: its absolute error is a few float32 ulps
(~1e-6), against the task's absolute atol 1e-5. Streamed flat (BLOCK elements per program).
"""
import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def _digamma_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0).to(tl.float32)
    neg = x < 0.0
    z = tl.where(neg, 1.0 - x, x)
    acc = tl.zeros((BLOCK,), tl.float32)
    for _ in tl.static_range(6):
        low = z < 6.0
        acc = tl.where(low, acc + 1.0 / z, acc)
        z = tl.where(low, z + 1.0, z)
    iz = 1.0 / z
    iz2 = iz * iz
    tail = iz2 * (0.08333333333333333 - iz2 * (0.008333333333333333 - iz2 * (0.003968253968253968 - iz2 * (0.004166666666666667 - iz2 * 0.007575757575757576))))
    psi = tl.log(z) - 0.5 * iz - tail - acc
    # reflection term pi cot(pi x) for x < 0, with pi r in [-pi/2, pi/2]
    r = x - tl.floor(x + 0.5)
    t = 3.141592653589793 * r
    u = t * t
    sin_t = t * (1.0 + u * (-0.16666666666666666 + u * (0.008333333333333333 + u * (-0.0001984126984126984 + u * (2.7557319223985893e-06 + u * (-2.505210838544172e-08 + u * 1.6059043836821613e-10))))))
    cos_t = 1.0 + u * (-0.5 + u * (0.041666666666666664 + u * (-0.001388888888888889 + u * (2.48015873015873e-05 + u * (-2.755731922398589e-07 + u * (2.08767569878681e-09 - u * 1.1470745597729725e-11))))))
    psi = tl.where(neg, psi - 3.141592653589793 * cos_t / sin_t, psi)
    psi = tl.where(neg & (r == 0.0), float("nan"), psi)
    psi = tl.where(x == 0.0, tl.where(x.to(tl.int32, bitcast=True) < 0, float("inf"), float("-inf")), psi)
    tl.store(y_ptr + offs, psi.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x):
    y = torch.empty_like(x)
    n = x.numel()
    _digamma_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=4)
    return y
