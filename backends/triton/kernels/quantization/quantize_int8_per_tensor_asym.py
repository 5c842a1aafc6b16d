import torch
import triton
import triton.language as tl

BLOCK = 4096
MAX_PROGRAMS = 1024  # partial min/max slots; every program of the second pass reads them all


@triton.jit
def _round_half_even(v):
    # Exact for every finite float32: a - floor(a) is exact for a >= 0, so ties are seen exactly
    # (floor(v + 0.5) misrounds the float just below a .5 tie).
    a = tl.abs(v)
    r = tl.floor(a)
    f = a - r
    odd = (r - 2.0 * tl.floor(r * 0.5)) != 0.0
    r = tl.where((f > 0.5) | ((f == 0.5) & odd), r + 1.0, r)
    return tl.where(v < 0, -r, r)


@triton.jit
def _partial_minmax(x_ptr, lo_ptr, hi_ptr, n, iters, nprog, BLOCK: tl.constexpr):
    # Grid-stride over blocks (program pid takes blocks pid, pid + nprog, ...; the last round may
    # be past the end, masked). The accumulators start at 0 because the contract's range always
    # contains 0, which also makes masked lanes (loaded as 0) harmless.
    pid = tl.program_id(0)
    lo = tl.zeros([BLOCK], dtype=tl.float32)
    hi = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, iters):
        offs = (pid + i * nprog).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
        lo = tl.minimum(lo, x)
        hi = tl.maximum(hi, x)
    tl.store(lo_ptr + pid, tl.min(lo, axis=0))
    tl.store(hi_ptr + pid, tl.max(hi, axis=0))


@triton.jit
def _quantize(x_ptr, q_ptr, lo_ptr, hi_ptr, s_ptr, zp_ptr, n, iters, nprog,
              BLOCK: tl.constexpr, BLOCK_P: tl.constexpr):
    # Each program folds the (few) partials itself instead of waiting on a third launch; min/max
    # are order-independent, so every program gets the same bits.
    pid = tl.program_id(0)
    p = tl.arange(0, BLOCK_P)
    lo = tl.min(tl.load(lo_ptr + p, mask=p < nprog, other=0.0), axis=0)
    hi = tl.max(tl.load(hi_ptr + p, mask=p < nprog, other=0.0), axis=0)
    # div_rn: the contract's divisions are IEEE-rounded (Triton's `/` may be approximate on GPUs)
    scale = tl.math.div_rn(tl.maximum(hi - lo, 1e-8), 255.0)
    zp = tl.minimum(tl.maximum(_round_half_even(tl.math.div_rn(-lo, scale)), 0.0), 255.0)
    if pid == 0:
        tl.store(s_ptr, scale)
        tl.store(zp_ptr, zp.to(tl.int32))
    for i in range(0, iters):
        offs = (pid + i * nprog).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        q = _round_half_even(tl.math.div_rn(x, scale)) + zp
        q = tl.minimum(tl.maximum(q, 0.0), 255.0)
        tl.store(q_ptr + offs, q.to(tl.uint8), mask=mask)


def kernel_function(x):
    x = x.contiguous()
    q = torch.empty(x.shape, dtype=torch.uint8, device=x.device)
    scale = torch.empty((), dtype=torch.float32, device=x.device)
    zero_point = torch.empty((), dtype=torch.int32, device=x.device)
    n = x.numel()
    num_blocks = triton.cdiv(n, BLOCK)
    nprog = max(1, min(num_blocks, MAX_PROGRAMS))
    iters = triton.cdiv(num_blocks, nprog)
    lo = torch.empty((nprog,), dtype=torch.float32, device=x.device)
    hi = torch.empty((nprog,), dtype=torch.float32, device=x.device)
    _partial_minmax[(nprog,)](x, lo, hi, n, iters, nprog, BLOCK=BLOCK, num_warps=8)
    _quantize[(nprog,)](x, q, lo, hi, scale, zero_point, n, iters, nprog, BLOCK=BLOCK,
                        BLOCK_P=triton.next_power_of_2(nprog), num_warps=8)
    return q, scale, zero_point
