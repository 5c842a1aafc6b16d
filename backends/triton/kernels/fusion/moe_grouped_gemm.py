"""MoE grouped GEMM: y[rows of e] = x[rows of e] @ W[e]^T over contiguous row groups (empty groups allowed).

One launch for all experts, with no host synchronisation: the group sizes stay on the device
and every program derives its own work from them. The grid has an upper bound of row tiles,
cdiv(M, BLOCK_M) + E (each group wastes at most one partial tile), times the N tiles. A program
loads the E group sizes, forms each group's tile count and the inclusive prefix sums of tiles
and rows (tl.cumsum over a vector of E), finds its expert as the number of groups whose tile
range ends at or before its tile index, and runs an ordinary tiled GEMM on that group's rows
against W[e]; programs past the last real tile do nothing. Rows past the group's end are clamped
to its last row (never stored), so the K loop needs no row masks and never reads another
expert's rows. Programs are ordered N-tile fastest: the programs running together share one
expert's x rows and its W[e] in L2. float32 uses IEEE products (tl.dot's default would be TF32).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _grouped_gemm_kernel(x_ptr, w_ptr, sizes_ptr, y_ptr, N, K, E,
                         stride_xm, stride_xk, stride_we, stride_wn, stride_wk, stride_ym, stride_yn,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, E_PAD: tl.constexpr,
                         EVEN_K: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    num_pid_n = tl.cdiv(N, BLOCK_N)
    tile = tl.program_id(0) // num_pid_n
    pid_n = tl.program_id(0) % num_pid_n
    e_idx = tl.arange(0, E_PAD)
    sizes = tl.load(sizes_ptr + e_idx, mask=e_idx < E, other=0)
    tiles = (sizes + BLOCK_M - 1) // BLOCK_M
    tiles_end = tl.cumsum(tiles, axis=0)  # inclusive: group e owns tiles [tiles_end - tiles, tiles_end)
    rows_end = tl.cumsum(sizes, axis=0)
    e = tl.sum((tiles_end <= tile).to(tl.int32), axis=0)  # groups entirely before this tile
    if e < E:
        sel = e_idx == e
        local = tile - tl.sum(tl.where(sel, tiles_end - tiles, 0), axis=0)
        row_end = tl.sum(tl.where(sel, rows_end, 0), axis=0)
        row_start = row_end - tl.sum(tl.where(sel, sizes, 0), axis=0)
        offs_m = row_start + local * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_k = tl.arange(0, BLOCK_K)
        rows = tl.minimum(offs_m, row_end - 1).to(tl.int64)
        cols = (offs_n % N).to(tl.int64)
        x_ptrs = x_ptr + rows[:, None] * stride_xm + offs_k[None, :] * stride_xk
        w_ptrs = w_ptr + e.to(tl.int64) * stride_we + cols[:, None] * stride_wn + offs_k[None, :] * stride_wk

        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            if EVEN_K:
                x = tl.load(x_ptrs)
                w = tl.load(w_ptrs)
            else:
                k_ok = (offs_k < K - k0)[None, :]
                x = tl.load(x_ptrs, mask=k_ok, other=0.0)
                w = tl.load(w_ptrs, mask=k_ok, other=0.0)
            if UPCAST:
                # Triton interpreter only: its tl.dot mishandles bfloat16 operands; exact fp32 copies.
                acc = tl.dot(x.to(tl.float32), tl.trans(w.to(tl.float32)), acc, input_precision="ieee")
            elif IEEE:
                acc = tl.dot(x, tl.trans(w), acc, input_precision="ieee")
            else:
                acc = tl.dot(x, tl.trans(w), acc)
            x_ptrs += BLOCK_K * stride_xk
            w_ptrs += BLOCK_K * stride_wk

        y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :] * stride_yn
        tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=(offs_m < row_end)[:, None] & (offs_n < N)[None, :])


def kernel_function(x, w, group_sizes):
    M, K = x.shape
    E, N, _ = w.shape
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    if x.dtype == torch.float32:
        # IEEE float32 runs on the FMA units; 128x128x32 with 8 warps (as the matmul reference)
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 32, 8, 3
    else:
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 64, 8, 4
    max_tiles = triton.cdiv(M, BLOCK_M) + E
    grid = (max_tiles * triton.cdiv(N, BLOCK_N),)
    _grouped_gemm_kernel[grid](
        x, w, group_sizes, y, N, K, E,
        x.stride(0), x.stride(1), w.stride(0), w.stride(1), w.stride(2), y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, E_PAD=max(2, triton.next_power_of_2(E)),
        EVEN_K=K % BLOCK_K == 0, IEEE=x.dtype == torch.float32,
        UPCAST=x.device.type == "cpu" and x.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    return y
