"""torch.logcumsumexp(x, dim=-1) of [R, C]: out[r, j] = log(sum_{k <= j} exp(x[r, k])).

Each program scans BLOCK_R rows block by block. With M the larger of the block's maximum and the
running result c of the blocks before it, out = M + log(exp(c - M) + cumsum(exp(x - M))).
Exponents are never positive, so nothing overflows whatever the row offset (+-120 here, beyond
float32's exp range). The shift is per block, not per element, so an element far below a later
maximum of its own block (a negative outlier early in a row with a positive one after it, say)
must not underflow: the terms and the running sum are float64 (range 2^-1022), and only the
transcendental parts run in float32, so no float64 exp/log is needed on the GPU:
  * exp(d), d <= 0: d log2(e) = n + f with n = floor, f in [0, 1); 2^f by float32 exp2 (2^-22
    relative), 2^n placed exactly into the float64 exponent field (0 below 2^-1022);
  * log(s): s = 2^e m with m in [1, 2) from the bits; log s = e log 2 + float32 log(m), an
    absolute error of ~1e-7 against the task's atol (1e-5 x rms ~ 1e-3).
-inf entries give exp = 0; a block whose maximum and carry are both -inf uses M = 0 so
-inf - (-inf) never forms a NaN, and its outputs are log(0) = -inf. The carry is the block's last
output (masked tail elements add 0), taken with a masked sum. One rounding to the output dtype.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK_C = 1024
TILE = 2048  # float64 elements per tile: BLOCK_R x BLOCK_C


@triton.jit
def _exp_nonpos(d):
    # exp(d) for float64 d <= 0 (or -inf): float32 exp2 of the fraction, exact power of two.
    t = d * 1.4426950408889634
    n = tl.floor(t)
    two_f = tl.exp2((t - n).to(tl.float32)).to(tl.float64)
    n_ok = n >= -1022.0
    scale = ((tl.where(n_ok, n, 0.0).to(tl.int64) + 1023) << 52).to(tl.float64, bitcast=True)
    return tl.where(n_ok, two_f * scale, 0.0)


@triton.jit
def _log_f64(s):
    # log(s) for float64 s >= 0: exponent from the bits, float32 log of the mantissa in [1, 2).
    bits = s.to(tl.int64, bitcast=True)
    e = ((bits >> 52) & 0x7FF) - 1023
    m = ((bits & 0xFFFFFFFFFFFFF) | (1023 << 52)).to(tl.float64, bitcast=True)
    out = e.to(tl.float64) * 0.6931471805599453 + tl.log(m.to(tl.float32)).to(tl.float64)
    return tl.where(s > 0.0, out, float("-inf"))


@triton.jit
def _logcumsumexp_kernel(x_ptr, y_ptr, R, C, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < R
    cols = tl.arange(0, BLOCK_C)
    base = rows[:, None].to(tl.int64) * C
    carry = tl.full((BLOCK_R,), float("-inf"), tl.float64)
    for start in range(0, C, BLOCK_C):
        offs = start + cols
        mask = row_ok[:, None] & (offs < C)[None, :]
        x = tl.load(x_ptr + base + offs[None, :], mask=mask, other=float("-inf")).to(tl.float32).to(tl.float64)
        m = tl.maximum(tl.max(x, axis=1), carry)
        m = tl.where(m == float("-inf"), 0.0, m)
        s = tl.cumsum(_exp_nonpos(x - m[:, None]), axis=1) + _exp_nonpos(carry - m)[:, None]
        y = m[:, None] + _log_f64(s)
        tl.store(y_ptr + base + offs[None, :], y.to(tl.float32).to(y_ptr.dtype.element_ty), mask=mask)
        carry = tl.sum(tl.where((cols == BLOCK_C - 1)[None, :], y, 0.0), axis=1)


def kernel_function(x):
    R, C = x.shape
    y = torch.empty_like(x)
    block_c = min(triton.next_power_of_2(C), MAX_BLOCK_C)
    block_r = min(max(TILE // block_c, 1), triton.next_power_of_2(R))
    _logcumsumexp_kernel[(triton.cdiv(R, block_r),)](x, y, R, C, BLOCK_R=block_r, BLOCK_C=block_c, num_warps=4)
    return y
