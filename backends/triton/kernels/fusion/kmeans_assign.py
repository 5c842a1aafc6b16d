"""k-means assignment: the nearest centroid of every point and its squared distance, without the [N, K] matrix.

Two kernels:
1. _first_duplicate_kernel: for every centroid, the lowest index of a centroid with an equal row
   (itself when it has none). O(K^2 D) compares, a few microseconds at K = 1024.
2. _kmeans_assign_kernel: one program per BLOCK_M points walks all centroids in BLOCK_N tiles.
   For each tile it runs the x . c GEMM over D (tl.dot, float32 accumulation) and forms the
   expansion d = ||x||^2 - 2 x.c + ||c||^2 (clamped at 0) in registers; a running (min, argmin)
   per point is all that survives the tile, and the chosen index is mapped through kernel 1's
   table at the end.
The mapping is what makes the tie rule (duplicated centroids: the lowest index) hold: a
duplicate's computed distance is only equal to its twin's up to the GEMM's summation order,
which may depend on where the row sits in a tile (it does in the interpreter's BLAS), so the
argmin alone may pick either copy. bfloat16 inputs go to the tensor cores as they are (their
products are exact in the float32 accumulator, so this is the widened computation); float32
uses IEEE products (TF32 would break the contract's 1e-5 relative distance bound).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _first_duplicate_kernel(c_ptr, first_ptr, D, stride_ck, stride_cd, BLOCK_J: tl.constexpr, BLOCK_D: tl.constexpr):
    # Program i compares centroid i with centroids j < i, BLOCK_J rows at a time; rows are equal
    # when no element differs (float equality, as torch.unique compares rows).
    i = tl.program_id(0)
    offs_d = tl.arange(0, BLOCK_D)
    first = i
    for j0 in range(0, i, BLOCK_J):
        offs_j = j0 + tl.arange(0, BLOCK_J)
        j_ok = offs_j < i
        n_diff = tl.zeros((BLOCK_J,), dtype=tl.int32)
        for d0 in range(0, D, BLOCK_D):
            d_ok = offs_d < D - d0
            ci = tl.load(c_ptr + i.to(tl.int64) * stride_ck + (d0 + offs_d) * stride_cd, mask=d_ok, other=0.0)
            cj = tl.load(c_ptr + offs_j.to(tl.int64)[:, None] * stride_ck + (d0 + offs_d)[None, :] * stride_cd,
                         mask=j_ok[:, None] & d_ok[None, :], other=0.0)
            n_diff += tl.sum((cj != ci[None, :]).to(tl.int32), axis=1)
        first = tl.minimum(first, tl.min(tl.where(j_ok & (n_diff == 0), offs_j, i), axis=0))
    tl.store(first_ptr + i, first.to(tl.int64))


@triton.jit
def _kmeans_assign_kernel(x_ptr, c_ptr, first_ptr, assign_ptr, dist_ptr, N, K, D,
                          stride_xn, stride_xd, stride_ck, stride_cd,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                          IEEE: tl.constexpr, UPCAST: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rows = (offs_m % N).to(tl.int64)  # rows past N are clamped to valid points, never stored
    offs_d = tl.arange(0, BLOCK_D)
    x_base = x_ptr + rows[:, None] * stride_xn

    x_sq = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        x = tl.load(x_base + (d0 + offs_d)[None, :] * stride_xd, mask=(offs_d < D - d0)[None, :], other=0.0)
        x = x.to(tl.float32)
        x_sq += tl.sum(x * x, axis=1)

    best_d = tl.full((BLOCK_M,), float("inf"), tl.float32)
    best_i = tl.zeros((BLOCK_M,), dtype=tl.int32)
    for n0 in range(0, K, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        c_base = c_ptr + (offs_n % K).to(tl.int64)[:, None] * stride_ck
        dot = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        c_sq = tl.zeros((BLOCK_N,), dtype=tl.float32)
        for d0 in range(0, D, BLOCK_D):
            d_ok = (offs_d < D - d0)[None, :]
            x = tl.load(x_base + (d0 + offs_d)[None, :] * stride_xd, mask=d_ok, other=0.0)
            c = tl.load(c_base + (d0 + offs_d)[None, :] * stride_cd, mask=d_ok, other=0.0)
            cf = c.to(tl.float32)
            c_sq += tl.sum(cf * cf, axis=1)
            if UPCAST:
                # Triton interpreter only: its tl.dot mishandles bfloat16 operands; exact fp32 copies.
                dot = tl.dot(x.to(tl.float32), tl.trans(cf), dot, input_precision="ieee")
            elif IEEE:
                dot = tl.dot(x, tl.trans(c), dot, input_precision="ieee")
            else:
                dot = tl.dot(x, tl.trans(c), dot)
        dist = tl.maximum(x_sq[:, None] - 2.0 * dot + c_sq[None, :], 0.0)
        dist = tl.where((offs_n < K)[None, :], dist, float("inf"))
        tile_min = tl.min(dist, axis=1)
        tile_arg = tl.argmin(dist, axis=1) + n0
        better = tile_min < best_d
        best_i = tl.where(better, tile_arg, best_i)
        best_d = tl.where(better, tile_min, best_d)

    m_ok = offs_m < N
    tl.store(assign_ptr + offs_m, tl.load(first_ptr + best_i, mask=m_ok, other=0), mask=m_ok)
    tl.store(dist_ptr + offs_m, best_d, mask=m_ok)


def kernel_function(x, centroids):
    N, D = x.shape
    K = centroids.shape[0]
    assign = torch.empty((N,), dtype=torch.int64, device=x.device)
    dist = torch.empty((N,), dtype=torch.float32, device=x.device)
    if N == 0:
        return assign, dist
    ieee = x.dtype == torch.float32
    first = torch.empty((K,), dtype=torch.int64, device=x.device)
    BLOCK_DUP_D = min(128, triton.next_power_of_2(D))
    _first_duplicate_kernel[(K,)](centroids, first, D, centroids.stride(0), centroids.stride(1),
                                  BLOCK_J=max(1, 4096 // BLOCK_DUP_D), BLOCK_D=BLOCK_DUP_D, num_warps=4)
    BLOCK_M = min(128, max(16, triton.next_power_of_2(N)))
    BLOCK_N = min(128, max(16, triton.next_power_of_2(K)))
    # D steps of 32 (float32, FMA units) or 64 (bf16 tensor cores); at least 16 for tl.dot
    BLOCK_D = min(32 if ieee else 64, max(16, triton.next_power_of_2(D)))
    _kmeans_assign_kernel[(triton.cdiv(N, BLOCK_M),)](
        x, centroids, first, assign, dist, N, K, D,
        x.stride(0), x.stride(1), centroids.stride(0), centroids.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        IEEE=ieee, UPCAST=x.device.type == "cpu" and x.dtype == torch.bfloat16,
        num_warps=8, num_stages=3,
    )
    return assign, dist
