"""Fused LM head + cross entropy: loss[i] = logsumexp(h_i @ W^T) - (h_i @ W^T)[target_i], ignore_index -100 -> 0.

The [N, V] logits are never written (4096 x 128256 float32 would be 2 GiB). Two kernels:
1. _logit_tiles_kernel: a tiled GEMM over (token block, vocabulary block). Its epilogue reduces
   the float32 logit tile to one (max, sum exp(z - max)) pair per row, stored in a small
   [N, cdiv(V, BLOCK_N)] partial array, and the tile that holds a row's target column stores that
   logit. Columns past V are -inf before the reduction (exp gives exactly 0).
2. _combine_kernel: one program per row merges its partial pairs into
   lse = M + log(sum s_j exp(m_j - M)) and writes lse - z[target], or 0 for ignored rows.
Programs visit tiles with all token blocks of one vocabulary block in a row (GROUP_M covers the
whole batch for the large shape), so each W block is read from DRAM once while h stays in L2.
float32 uses IEEE products (tl.dot's default would be TF32); the loss is rounded once, to h's dtype.
"""
import torch
import triton
import triton.language as tl

IGNORE_INDEX = -100
GROUP_M = 32  # token blocks sharing one W block in L2 (4096 tokens = 32 blocks of 128)


@triton.jit
def _logit_tiles_kernel(h_ptr, w_ptr, t_ptr, pmax_ptr, psum_ptr, zt_ptr, M, V, K, NUM_VB,
                        stride_hm, stride_hk, stride_wv, stride_wk,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr, EVEN_K: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_in_group = GROUP_M * NUM_VB
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    rows = (offs_m % M).to(tl.int64)
    cols = (offs_n % V).to(tl.int64)
    h_ptrs = h_ptr + rows[:, None] * stride_hm + offs_k[None, :] * stride_hk
    w_ptrs = w_ptr + cols[:, None] * stride_wv + offs_k[None, :] * stride_wk

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        if EVEN_K:
            h = tl.load(h_ptrs)
            w = tl.load(w_ptrs)
        else:
            k_ok = (offs_k < K - k0)[None, :]
            h = tl.load(h_ptrs, mask=k_ok, other=0.0)
            w = tl.load(w_ptrs, mask=k_ok, other=0.0)
        if UPCAST:
            # Triton interpreter only: its tl.dot mishandles bfloat16 operands; exact fp32 copies.
            acc = tl.dot(h.to(tl.float32), tl.trans(w.to(tl.float32)), acc, input_precision="ieee")
        elif IEEE:
            acc = tl.dot(h, tl.trans(w), acc, input_precision="ieee")
        else:
            acc = tl.dot(h, tl.trans(w), acc)
        h_ptrs += BLOCK_K * stride_hk
        w_ptrs += BLOCK_K * stride_wk

    m_ok = offs_m < M
    z = tl.where((offs_n < V)[None, :], acc, float("-inf"))
    tile_max = tl.max(z, axis=1)  # finite: every vocabulary block holds at least one real column
    tile_sum = tl.sum(tl.exp(z - tile_max[:, None]), axis=1)
    part = offs_m.to(tl.int64) * NUM_VB + pid_n
    tl.store(pmax_ptr + part, tile_max, mask=m_ok)
    tl.store(psum_ptr + part, tile_sum, mask=m_ok)
    tgt = tl.load(t_ptr + rows)
    hit = (offs_n[None, :] == tgt[:, None]) & (offs_n < V)[None, :]
    in_tile = (tgt >= pid_n * BLOCK_N) & (tgt < pid_n * BLOCK_N + BLOCK_N)
    tl.store(zt_ptr + offs_m, tl.sum(tl.where(hit, acc, 0.0), axis=1), mask=m_ok & in_tile)


@triton.jit
def _combine_kernel(t_ptr, pmax_ptr, psum_ptr, zt_ptr, loss_ptr, NUM_VB,
                    IGNORE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    j = tl.arange(0, BLOCK)
    m_vec = tl.full((BLOCK,), float("-inf"), tl.float32)
    for start in range(0, NUM_VB, BLOCK):
        m_vec = tl.maximum(m_vec, tl.load(pmax_ptr + row * NUM_VB + start + j, mask=start + j < NUM_VB,
                                          other=float("-inf")))
    m = tl.max(m_vec, axis=0)
    s_vec = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, NUM_VB, BLOCK):
        ok = start + j < NUM_VB
        pm = tl.load(pmax_ptr + row * NUM_VB + start + j, mask=ok, other=float("-inf"))
        ps = tl.load(psum_ptr + row * NUM_VB + start + j, mask=ok, other=0.0)
        s_vec += ps * tl.exp(pm - m)
    tgt = tl.load(t_ptr + row)
    keep = tgt != IGNORE
    z_t = tl.load(zt_ptr + row, mask=keep, other=0.0)
    loss = tl.where(keep, m + tl.log(tl.sum(s_vec, axis=0)) - z_t, 0.0)
    tl.store(loss_ptr + row, loss.to(loss_ptr.dtype.element_ty))


def kernel_function(h, weight, target):
    M, K = h.shape
    V = weight.shape[0]
    loss = torch.empty((M,), dtype=h.dtype, device=h.device)
    if M == 0:
        return loss
    if M <= 16:
        # decode-like (a few rows): a narrow M tile
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 16, 64, 64, 4, 4
    elif h.dtype == torch.float32:
        # IEEE float32 runs on the FMA units; 128x128x32 with 8 warps (as the matmul reference)
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 32, 8, 3
    else:
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 64, 8, 4
    if 16 < M <= 64:
        BLOCK_M = 64  # a short batch: half-height tiles instead of mostly padding rows
    num_vb = triton.cdiv(V, BLOCK_N)
    pmax = torch.empty((M, num_vb), dtype=torch.float32, device=h.device)
    psum = torch.empty((M, num_vb), dtype=torch.float32, device=h.device)
    z_target = torch.empty((M,), dtype=torch.float32, device=h.device)
    grid = (triton.cdiv(M, BLOCK_M) * num_vb,)
    _logit_tiles_kernel[grid](
        h, weight, target, pmax, psum, z_target, M, V, K, num_vb,
        h.stride(0), h.stride(1), weight.stride(0), weight.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, EVEN_K=K % BLOCK_K == 0,
        IEEE=h.dtype == torch.float32, UPCAST=h.device.type == "cpu" and h.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    BLOCK = min(triton.next_power_of_2(num_vb), 1024)
    _combine_kernel[(M,)](target, pmax, psum, z_target, loss, num_vb, IGNORE=IGNORE_INDEX, BLOCK=BLOCK, num_warps=4)
    return loss
