"""BatchNorm2d training forward on NCHW: y = (x - mean) / sqrt(var + eps) * weight + bias with the
batch statistics of each channel over N x H x W (biased variance), plus the running statistics
updated with momentum 0.1 (the running variance takes the unbiased estimate).

A channel's elements are N planes of H x W spread across the whole tensor, so its statistics need a
reduction across programs. Three Triton passes:
  1. one program per (n, c, chunk of at most BLOCK elements of the plane) loads its chunk once and
     takes the chunk's exact two-pass mean and sum of squared deviations (M2) in registers;
  2. one program per channel merges the chunk partials with Chan's parallel formula,
     M2 = sum M2_i + sum n_i (mean_i - mean)^2, which is as accurate as a two-pass variance over
     the whole channel (no E[x^2] - E[x]^2 cancellation with the task's channel offsets), and
     writes the float32 mean and scale rstd * weight plus both running statistics;
  3. one program per (n, c, chunk) normalises: y = (x - mean) * scale + bias.
x is read twice and y written once, the minimum for batch statistics that do not fit on chip; the
partials are a few floats per 4096 elements. All arithmetic is float32, rounded once to the dtype.
"""
import torch
import triton
import triton.language as tl

EPS: tl.constexpr = tl.constexpr(1e-5)
MOMENTUM: tl.constexpr = tl.constexpr(0.1)
MAX_BLOCK = 4096  # plane elements per program
MAX_MERGE = 1024  # partials merged per step in pass 2


@triton.jit
def _chunk_stats(x_ptr, mean_ptr, m2_ptr, C, HW, stride_n, stride_c, N, CHUNKS, BLOCK: tl.constexpr):
    plane = tl.program_id(0)  # n * C + c
    chunk = tl.program_id(1)
    n = plane // C
    c = plane % C
    offs = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    base = x_ptr + n.to(tl.int64) * stride_n + c.to(tl.int64) * stride_c
    x = tl.load(base + offs, mask=mask, other=0.0).to(tl.float32)
    cnt = tl.minimum(HW - chunk * BLOCK, BLOCK)
    mean = tl.sum(x, axis=0) / cnt
    d = tl.where(mask, x - mean, 0.0)
    # partials grouped by channel: channel c owns [c * N * CHUNKS, (c + 1) * N * CHUNKS)
    slot = (c.to(tl.int64) * N + n) * CHUNKS + chunk
    tl.store(mean_ptr + slot, mean)
    tl.store(m2_ptr + slot, tl.sum(d * d, axis=0))


@triton.jit
def _channel_stats(pmean_ptr, pm2_ptr, w_ptr, rm_ptr, rv_ptr, mean_ptr, scale_ptr, rm_out_ptr, rv_out_ptr,
                   HW, P, CHUNKS, BLOCK: tl.constexpr, MERGE: tl.constexpr):
    c = tl.program_id(0)
    first = c.to(tl.int64) * P
    i = tl.arange(0, MERGE)
    total = (P // CHUNKS) * HW  # elements of the channel: N * H * W
    acc = tl.zeros((MERGE,), dtype=tl.float32)
    for p0 in range(0, P, MERGE):
        p = p0 + i
        ok = p < P
        cnt = tl.minimum(HW - (p % CHUNKS) * BLOCK, BLOCK).to(tl.float32)
        acc += tl.where(ok, cnt * tl.load(pmean_ptr + first + p, mask=ok, other=0.0), 0.0)
    mean = tl.sum(acc, axis=0) / total
    acc = tl.zeros((MERGE,), dtype=tl.float32)
    for p0 in range(0, P, MERGE):
        p = p0 + i
        ok = p < P
        cnt = tl.minimum(HW - (p % CHUNKS) * BLOCK, BLOCK).to(tl.float32)
        dm = tl.load(pmean_ptr + first + p, mask=ok, other=0.0) - mean
        acc += tl.where(ok, tl.load(pm2_ptr + first + p, mask=ok, other=0.0) + cnt * dm * dm, 0.0)
    var = tl.sum(acc, axis=0) / total
    scale = tl.rsqrt(var + EPS) * tl.load(w_ptr + c).to(tl.float32)
    tl.store(mean_ptr + c, mean)
    tl.store(scale_ptr + c, scale)
    rm = (1.0 - MOMENTUM) * tl.load(rm_ptr + c).to(tl.float32) + MOMENTUM * mean
    unbiased = var * total / (total - 1)
    rv = (1.0 - MOMENTUM) * tl.load(rv_ptr + c).to(tl.float32) + MOMENTUM * unbiased
    tl.store(rm_out_ptr + c, rm.to(rm_out_ptr.dtype.element_ty))
    tl.store(rv_out_ptr + c, rv.to(rv_out_ptr.dtype.element_ty))


@triton.jit
def _normalise(x_ptr, y_ptr, mean_ptr, scale_ptr, b_ptr, C, HW, stride_n, stride_c, BLOCK: tl.constexpr):
    plane = tl.program_id(0)
    chunk = tl.program_id(1)
    n = plane // C
    c = plane % C
    offs = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    x = tl.load(x_ptr + n.to(tl.int64) * stride_n + c.to(tl.int64) * stride_c + offs, mask=mask, other=0.0)
    y = (x.to(tl.float32) - tl.load(mean_ptr + c)) * tl.load(scale_ptr + c) + tl.load(b_ptr + c).to(tl.float32)
    tl.store(y_ptr + plane.to(tl.int64) * HW + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x, weight, bias, running_mean, running_var):
    N, C, H, W = x.shape
    HW = H * W
    assert x.stride(3) == 1 and x.stride(2) == W, "each (n, c) plane must be contiguous"
    y = torch.empty((N, C, H, W), dtype=x.dtype, device=x.device)
    rm_out = torch.empty_like(running_mean)
    rv_out = torch.empty_like(running_var)
    BLOCK = min(triton.next_power_of_2(HW), MAX_BLOCK)
    chunks = triton.cdiv(HW, BLOCK)
    P = N * chunks  # partials per channel
    pmean = torch.empty((C * P,), dtype=torch.float32, device=x.device)
    pm2 = torch.empty((C * P,), dtype=torch.float32, device=x.device)
    mean = torch.empty((C,), dtype=torch.float32, device=x.device)
    scale = torch.empty((C,), dtype=torch.float32, device=x.device)
    warps = 4 if BLOCK <= 1024 else 8
    _chunk_stats[(N * C, chunks)](x, pmean, pm2, C, HW, x.stride(0), x.stride(1), N, chunks, BLOCK=BLOCK, num_warps=warps)
    _channel_stats[(C,)](pmean, pm2, weight, running_mean, running_var, mean, scale, rm_out, rv_out, HW, P, chunks,
                         BLOCK=BLOCK, MERGE=min(triton.next_power_of_2(P), MAX_MERGE), num_warps=4)
    _normalise[(N * C, chunks)](x, y, mean, scale, bias, C, HW, x.stride(0), x.stride(1), BLOCK=BLOCK, num_warps=warps)
    return y, rm_out, rv_out
