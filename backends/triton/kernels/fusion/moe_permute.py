"""MoE dispatch: copy each token's hidden state once per selected expert into expert-contiguous order.

Returns (permuted [T*k, H], row_index [T, k], tokens_per_expert [E]). The flat slots t*k + j are
cut into blocks of BLOCK_S, and the destination of a slot is
  off[e] + (slots of expert e in earlier blocks) + (slots of expert e earlier in its own block),
the stable expert-major order (the reference's, so the output is deterministic, with no atomics):
1. _block_histogram_kernel: per block, the slot count of every expert (a one-hot tile summed).
2. _block_scan_kernel: one program walks the [blocks, E] histogram in chunks and writes each
   block's exclusive prefix per expert, then the totals (tokens_per_expert). It reads 4 bytes
   per block and expert: a few KiB for the large shape.
3. _slot_rows_kernel: per block, the in-block rank of each slot (exclusive cumsum of the one-hot
   tile), plus the block prefix and the expert offset (an exclusive cumsum of the totals, E
   values) gives row_index.
4. _copy_rows_kernel: per (token, BLOCK_H slice), the token's slice of x is read once and written
   to its k rows: the only kernel that moves hidden states (T*H read, T*k*H written).
"""
import torch
import triton
import triton.language as tl

ONE_HOT_TILE = 8192  # slots x padded experts per one-hot tile
SCAN_CHUNK = 64  # blocks per step of the scan
MAX_BLOCK_H = 2048


@triton.jit
def _block_histogram_kernel(ids_ptr, hist_ptr, S, E, BLOCK_S: tl.constexpr, E_PAD: tl.constexpr):
    blk = tl.program_id(0)
    slots = blk * BLOCK_S + tl.arange(0, BLOCK_S)
    ids = tl.load(ids_ptr + slots, mask=slots < S, other=E_PAD)  # padding matches no expert
    e = tl.arange(0, E_PAD)
    counts = tl.sum((ids[:, None] == e[None, :]).to(tl.int32), axis=0)
    tl.store(hist_ptr + blk * E_PAD + e, counts)


@triton.jit
def _block_scan_kernel(hist_ptr, prefix_ptr, counts_ptr, NB, E, CHUNK: tl.constexpr, E_PAD: tl.constexpr):
    e = tl.arange(0, E_PAD)
    c = tl.arange(0, CHUNK)
    carry = tl.zeros((E_PAD,), dtype=tl.int32)
    for b0 in range(0, NB, CHUNK):
        blk = b0 + c
        offs = blk[:, None] * E_PAD + e[None, :]
        h = tl.load(hist_ptr + offs, mask=(blk < NB)[:, None], other=0)
        tl.store(prefix_ptr + offs, carry[None, :] + tl.cumsum(h, axis=0) - h, mask=(blk < NB)[:, None])
        carry += tl.sum(h, axis=0)
    tl.store(counts_ptr + e, carry.to(tl.int64), mask=e < E)


@triton.jit
def _slot_rows_kernel(ids_ptr, prefix_ptr, counts_ptr, rows_ptr, S, E, BLOCK_S: tl.constexpr, E_PAD: tl.constexpr):
    blk = tl.program_id(0)
    slots = blk * BLOCK_S + tl.arange(0, BLOCK_S)
    ids = tl.load(ids_ptr + slots, mask=slots < S, other=E_PAD)
    e = tl.arange(0, E_PAD)
    counts = tl.load(counts_ptr + e, mask=e < E, other=0)
    expert_off = tl.cumsum(counts, axis=0) - counts  # first output row of each expert
    base = tl.load(prefix_ptr + blk * E_PAD + e).to(tl.int64) + expert_off
    onehot = ids[:, None] == e[None, :]
    hits = onehot.to(tl.int32)
    rank = tl.cumsum(hits, axis=0) - hits  # earlier slots of the same expert in this block
    row = tl.sum(tl.where(onehot, rank.to(tl.int64) + base[None, :], 0), axis=1)
    tl.store(rows_ptr + slots, row, mask=slots < S)


@triton.jit
def _copy_rows_kernel(x_ptr, rows_ptr, out_ptr, H, stride_xt, stride_xh, stride_ot,
                      K: tl.constexpr, BLOCK_H: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    ok = offs < H
    x = tl.load(x_ptr + t * stride_xt + offs * stride_xh, mask=ok)
    for j in tl.static_range(K):
        row = tl.load(rows_ptr + t * K + j)
        tl.store(out_ptr + row * stride_ot + offs, x, mask=ok)


def kernel_function(x, expert_ids, num_experts):
    T, H = x.shape
    K = expert_ids.shape[1]
    E = num_experts
    S = T * K
    permuted = torch.empty((S, H), dtype=x.dtype, device=x.device)
    row_index = torch.empty((T, K), dtype=torch.int64, device=x.device)
    counts = torch.empty((E,), dtype=torch.int64, device=x.device)
    ids = expert_ids.view(S)  # flat slot order t*k + j (a view: expert_ids must be contiguous)
    E_PAD = triton.next_power_of_2(E)
    BLOCK_S = max(16, min(1024, ONE_HOT_TILE // E_PAD))
    nb = triton.cdiv(S, BLOCK_S)
    hist = torch.empty((max(nb, 1), E_PAD), dtype=torch.int32, device=x.device)
    prefix = torch.empty((max(nb, 1), E_PAD), dtype=torch.int32, device=x.device)
    if nb:
        _block_histogram_kernel[(nb,)](ids, hist, S, E, BLOCK_S=BLOCK_S, E_PAD=E_PAD, num_warps=4)
    _block_scan_kernel[(1,)](hist, prefix, counts, nb, E, CHUNK=SCAN_CHUNK, E_PAD=E_PAD, num_warps=4)
    if nb == 0:
        return permuted, row_index, counts
    _slot_rows_kernel[(nb,)](ids, prefix, counts, row_index, S, E, BLOCK_S=BLOCK_S, E_PAD=E_PAD, num_warps=4)
    if H:
        BLOCK_H = min(triton.next_power_of_2(H), MAX_BLOCK_H)
        _copy_rows_kernel[(T, triton.cdiv(H, BLOCK_H))](x, row_index, permuted, H, x.stride(0), x.stride(1),
                                                        permuted.stride(0), K=K, BLOCK_H=BLOCK_H,
                                                        num_warps=4 if BLOCK_H <= 1024 else 8)
    return permuted, row_index, counts
