"""F.group_norm of x [N, C, H, W] with G groups, per-channel weight and bias, eps 1e-5: each
(sample, group of C / G channels) is normalised with its own mean and biased variance.

A group holds (C / G) x H x W elements (131072 at the task's large shape), too many for one
program's registers, and N x G groups alone (1024 there) are too few programs to keep an H100's
loads in flight. So two Triton passes over chunks of at most BLOCK elements of one (n, c) plane:
  1. each chunk is loaded once and reduced to its exact two-pass mean and sum of squared
     deviations (M2), in registers;
  2. each normalising program first merges the partials of its own group with Chan's parallel
     formula, M2 = sum M2_i + sum n_i (mean_i - mean)^2 (as accurate as a two-pass variance over
     the whole group, with no E[x^2] - E[x]^2 cancellation), then writes
     y = (x - mean) * rstd * weight[c] + bias[c] for its chunk.
The merge is repeated by every program of a group, but it reads only (C / G) x chunks partials
(32 floats per program at the large shape) from L2, cheaper than a third launch. x is read twice
and y written once; arithmetic is float32, rounded once to the dtype.
"""
import torch
import triton
import triton.language as tl

EPS: tl.constexpr = tl.constexpr(1e-5)
MAX_BLOCK = 4096  # plane elements per program
MAX_MERGE = 1024  # partials merged per step


@triton.jit
def _chunk_stats(x_ptr, mean_ptr, m2_ptr, C, HW, stride_n, stride_c, CHUNKS, BLOCK: tl.constexpr):
    plane = tl.program_id(0)  # n * C + c
    chunk = tl.program_id(1)
    n = plane // C
    c = plane % C
    offs = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    x = tl.load(x_ptr + n.to(tl.int64) * stride_n + c.to(tl.int64) * stride_c + offs, mask=mask, other=0.0)
    x = x.to(tl.float32)
    cnt = tl.minimum(HW - chunk * BLOCK, BLOCK)
    mean = tl.sum(x, axis=0) / cnt
    d = tl.where(mask, x - mean, 0.0)
    slot = plane.to(tl.int64) * CHUNKS + chunk  # a group's partials are contiguous
    tl.store(mean_ptr + slot, mean)
    tl.store(m2_ptr + slot, tl.sum(d * d, axis=0))


@triton.jit
def _normalise(x_ptr, y_ptr, pmean_ptr, pm2_ptr, w_ptr, b_ptr, C, HW, CG, stride_n, stride_c, CHUNKS,
               BLOCK: tl.constexpr, MERGE: tl.constexpr):
    plane = tl.program_id(0)
    chunk = tl.program_id(1)
    n = plane // C
    c = plane % C
    # merge the partials of group (n, c // CG): CG planes x CHUNKS chunks, contiguous
    first = (n * C + (c // CG) * CG).to(tl.int64) * CHUNKS
    P = CG * CHUNKS
    total = CG * HW
    i = tl.arange(0, MERGE)
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
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / total + EPS)
    scale = rstd * tl.load(w_ptr + c).to(tl.float32)
    shift = tl.load(b_ptr + c).to(tl.float32)

    offs = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    x = tl.load(x_ptr + n.to(tl.int64) * stride_n + c.to(tl.int64) * stride_c + offs, mask=mask, other=0.0)
    y = (x.to(tl.float32) - mean) * scale + shift
    tl.store(y_ptr + plane.to(tl.int64) * HW + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x, weight, bias, num_groups):
    N, C, H, W = x.shape
    HW = H * W
    assert C % num_groups == 0, "channels must divide into the groups"
    assert x.stride(3) == 1 and x.stride(2) == W, "each (n, c) plane must be contiguous"
    y = torch.empty((N, C, H, W), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    CG = C // num_groups
    BLOCK = min(triton.next_power_of_2(HW), MAX_BLOCK)
    chunks = triton.cdiv(HW, BLOCK)
    pmean = torch.empty((N * C * chunks,), dtype=torch.float32, device=x.device)
    pm2 = torch.empty((N * C * chunks,), dtype=torch.float32, device=x.device)
    warps = 4 if BLOCK <= 1024 else 8
    _chunk_stats[(N * C, chunks)](x, pmean, pm2, C, HW, x.stride(0), x.stride(1), chunks, BLOCK=BLOCK, num_warps=warps)
    _normalise[(N * C, chunks)](x, y, pmean, pm2, weight, bias, C, HW, CG, x.stride(0), x.stride(1), chunks,
                                BLOCK=BLOCK, MERGE=min(triton.next_power_of_2(CG * chunks), MAX_MERGE), num_warps=warps)
    return y
