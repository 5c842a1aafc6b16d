"""MoE router: probs = softmax(logits [T, E]); the k largest per token, descending, renormalised to sum to 1,
with their int64 expert indices.

A program owns BLOCK_T tokens as one [BLOCK_T, E_PAD] float32 tile (read once). Selection is
done on the logits (softmax is monotonic, so the top-k set and order are the probabilities'):
k rounds of "largest remaining value, lowest expert index among equals", each a row max and a
row min over the tile, with the picked expert removed. The softmax denominator cancels in the
renormalisation, so the weights are w_j = exp(v_j - v_0) / sum_i exp(v_i - v_0) over the k picked
logits (v_0 the largest): no pass over all E exponentials is needed. float32 throughout, rounded
once to the logits dtype; indices are written as int64.
"""
import torch
import triton
import triton.language as tl

TILE = 4096  # logits per program: BLOCK_T tokens x E_PAD experts


@triton.jit
def _topk_routing_kernel(x_ptr, w_ptr, id_ptr, T, E, stride_xt, stride_xe, stride_wt, stride_it,
                         K: tl.constexpr, BLOCK_T: tl.constexpr, E_PAD: tl.constexpr, K_PAD: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    row_ok = rows < T
    e = tl.arange(0, E_PAD)[None, :]
    free = e < E
    x = tl.load(x_ptr + rows.to(tl.int64)[:, None] * stride_xt + e * stride_xe,
                mask=row_ok[:, None] & free, other=0.0).to(tl.float32)  # rows past T: finite, never stored
    kk = tl.arange(0, K_PAD)[None, :]
    vals = tl.zeros((BLOCK_T, K_PAD), dtype=tl.float32)
    ids = tl.zeros((BLOCK_T, K_PAD), dtype=tl.int32)
    for r in tl.static_range(K):
        best = tl.max(tl.where(free, x, float("-inf")), axis=1)
        pick = tl.min(tl.where(free & (x == best[:, None]), e, E_PAD), axis=1)
        free = free & (e != pick[:, None])
        vals = tl.where(kk == r, best[:, None], vals)
        ids = tl.where(kk == r, pick[:, None], ids)
    top = tl.sum(tl.where(kk == 0, vals, 0.0), axis=1)  # round 0's value: the row max
    ex = tl.where(kk < K, tl.exp(vals - top[:, None]), 0.0)
    w = ex / tl.sum(ex, axis=1)[:, None]
    out_mask = row_ok[:, None] & (kk < K)
    tl.store(w_ptr + rows.to(tl.int64)[:, None] * stride_wt + kk, w.to(w_ptr.dtype.element_ty), mask=out_mask)
    tl.store(id_ptr + rows.to(tl.int64)[:, None] * stride_it + kk, ids.to(tl.int64), mask=out_mask)


def kernel_function(logits, k):
    T, E = logits.shape
    assert 1 <= k <= E
    weights = torch.empty((T, k), dtype=logits.dtype, device=logits.device)
    experts = torch.empty((T, k), dtype=torch.int64, device=logits.device)
    if T == 0:
        return weights, experts
    E_PAD = triton.next_power_of_2(E)
    BLOCK_T = max(1, min(64, TILE // E_PAD))
    _topk_routing_kernel[(triton.cdiv(T, BLOCK_T),)](
        logits, weights, experts, T, E, logits.stride(0), logits.stride(1), weights.stride(0), experts.stride(0),
        K=k, BLOCK_T=BLOCK_T, E_PAD=E_PAD, K_PAD=triton.next_power_of_2(k), num_warps=8)
    return weights, experts
