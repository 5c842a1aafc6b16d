"""Grouped GEMM (the MoE expert matmul): rows of a [T, K] are packed by group, w [G, K, N] holds one
weight matrix per group and int32 offsets [G] are the cumulative end rows (group g owns rows
[offsets[g-1], offsets[g]), possibly none); out[r] = a[r] @ w[group of r]; float32 means IEEE
float32 products (no TF32).

One launch for all groups, with no host-side look at the offsets (no device sync, no per-group
launches): the grid enumerates "virtual" row tiles, enough for any split of T rows into G groups
(each group can add one partial tile: cdiv(T, BLOCK_M) + G, plus one tile for rows past
offsets[G-1], which are zeros). Each program reads the G offsets, derives every group's tile count
and their running total in registers (a [G_PAD, G_PAD] masked sum, no scan or custom reduction),
and finds the group its virtual tile falls in and the tile's first row. It then runs an ordinary
tiled tl.dot loop of its rows against that group's weights. Tiles past the last group have no
rows and no K loop. A tile never straddles two groups, so no rows are computed twice or against
the wrong weights; an empty group (the task always has one) simply has no tiles. Grouped launch
order (GROUP_M virtual row tiles per column block) keeps a column block of an expert's weights in
L2 while that expert's row tiles use it.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _grouped_gemm_kernel(a_ptr, w_ptr, off_ptr, out_ptr, T, N, K, G, M_TILES,
                         stride_am, stride_ak, stride_wg, stride_wk, stride_wn, stride_om, stride_on,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         GROUP_M: tl.constexpr, G_PAD: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(M_TILES - first_pid_m, GROUP_M)
    tile = first_pid_m + ((pid % num_pid_in_group) % group_size_m)  # virtual row tile
    pid_n = (pid % num_pid_in_group) // group_size_m

    # Row range of every group; index G is the tail [offsets[G-1], T) (rows no group owns).
    gi = tl.arange(0, G_PAD)
    ends = tl.load(off_ptr + gi, mask=gi < G, other=T)
    starts = tl.load(off_ptr + gi - 1, mask=(gi >= 1) & (gi <= G), other=0)
    starts = tl.where(gi > G, T, starts)
    ends = tl.where(gi > G, T, ends)
    counts = tl.maximum(ends - starts, 0)
    tiles = (counts + BLOCK_M - 1) // BLOCK_M
    tiles_end = tl.sum(tl.where(gi[None, :] <= gi[:, None], tiles[None, :], 0), axis=1)  # inclusive running total
    g = tl.sum((tiles_end <= tile).to(tl.int32), axis=0)  # the group whose tiles contain `tile`
    sel = gi == g
    first_tile = tl.sum(tl.where(sel, tiles_end - tiles, 0), axis=0)
    row_start = tl.sum(tl.where(sel, starts, 0), axis=0) + (tile - first_tile) * BLOCK_M
    row_end = tl.sum(tl.where(sel, ends, 0), axis=0)  # 0 past the tail: no rows
    k_len = tl.where(g < G, K, 0)  # the tail tile and tiles past it multiply nothing

    offs_m = row_start + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < row_end
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    w_ptrs = w_ptr + g.to(tl.int64) * stride_wg + offs_k[:, None].to(tl.int64) * stride_wk + offs_n[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, k_len, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
        if UPCAST:
            # Triton interpreter only: its tl.dot multiplies bfloat16 operands as raw uint16 bit
            # patterns; exact float32 copies (bf16 -> fp32 is lossless) give the right products.
            acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
        elif IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")  # float32: no TF32
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        w_ptrs += BLOCK_K * stride_wk

    out_ptrs = out_ptr + offs_m[:, None].to(tl.int64) * stride_om + offs_n[None, :] * stride_on
    tl.store(out_ptrs, acc.to(out_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def kernel_function(a, w, offsets):
    T, K = a.shape
    G, K2, N = w.shape
    assert K == K2 and offsets.shape == (G,), "shapes do not match"
    out = torch.empty((T, N), dtype=a.dtype, device=a.device)
    if out.numel() == 0:
        return out
    if a.dtype == torch.float32:
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 32, 8, 3
    else:
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 64, 8, 3
    if T <= 16 * G:
        BLOCK_M, BLOCK_N, warps = 16, 64, 4  # groups of a few rows: narrow tiles waste less
    m_tiles = triton.cdiv(T, BLOCK_M) + G + 1
    grid = (m_tiles * triton.cdiv(N, BLOCK_N),)
    _grouped_gemm_kernel[grid](
        a, w, offsets, out, T, N, K, G, m_tiles,
        a.stride(0), a.stride(1), w.stride(0), w.stride(1), w.stride(2), out.stride(0), out.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8, G_PAD=triton.next_power_of_2(G + 1),
        IEEE=a.dtype == torch.float32, UPCAST=a.device.type == "cpu" and a.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    return out
