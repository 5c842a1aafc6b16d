import torch
import triton
import triton.language as tl

TILE = 2048  # logits held per program: BLOCK_T tokens x (padded groups x padded group size)


@triton.jit
def _moe_router_kernel(logits_ptr, w_ptr, id_ptr, T, stride_t, scale,
                       N_GROUP: tl.constexpr, GROUP: tl.constexpr, TOPK_GROUP: tl.constexpr,
                       K: tl.constexpr, BLOCK_T: tl.constexpr, NG_PAD: tl.constexpr,
                       G_PAD: tl.constexpr, K_PAD: tl.constexpr):
    # The tile is [tokens, group, expert-in-group] so a group's score is a plain axis-2 max.
    # Ranking is done on the float32 logits: softmax is monotonic and maps equal logits to equal
    # probabilities, so the selection (ties included) is the reference's. The softmax denominator
    # cancels in the renormalisation: w_i = exp(x_i - max) / sum_sel exp(x_j - max) * scale.
    rows = tl.program_id(0).to(tl.int64) * BLOCK_T + tl.arange(0, BLOCK_T)
    row_ok = rows < T
    g2 = tl.arange(0, NG_PAD)[None, :]  # [1, NG_PAD]
    g = g2[:, :, None]
    j = tl.arange(0, G_PAD)[None, None, :]
    eid = g * GROUP + j  # expert id, [1, NG_PAD, G_PAD]
    valid = (g < N_GROUP) & (j < GROUP)
    x = tl.load(logits_ptr + rows[:, None, None] * stride_t + eid,
                mask=row_ok[:, None, None] & valid, other=0.0).to(tl.float32)
    x = tl.where(valid, x, float("-inf"))

    # Groups: TOPK_GROUP rounds of "best remaining score, lowest group id among equals".
    gscore = tl.max(x, axis=2)  # [BLOCK_T, NG_PAD]
    g_free = tl.broadcast_to(g2 < N_GROUP, (BLOCK_T, NG_PAD))
    g_keep = tl.broadcast_to(g2 < 0, (BLOCK_T, NG_PAD))
    for _ in tl.static_range(TOPK_GROUP):
        best = tl.max(tl.where(g_free, gscore, float("-inf")), axis=1)
        pick = tl.min(tl.where(g_free & (gscore == best[:, None]), g2, NG_PAD), axis=1)
        hit = g2 == pick[:, None]
        g_keep = g_keep | hit
        g_free = g_free & (hit == 0)

    # Experts of the kept groups: K rounds of the same rule on the expert id.
    e_free = valid & g_keep[:, :, None]
    kk = tl.arange(0, K_PAD)[None, :]
    vals = tl.zeros((BLOCK_T, K_PAD), dtype=tl.float32)
    ids = tl.zeros((BLOCK_T, K_PAD), dtype=tl.int32)
    for r in tl.static_range(K):
        best = tl.max(tl.max(tl.where(e_free, x, float("-inf")), axis=2), axis=1)
        cand = tl.where(e_free & (x == best[:, None, None]), eid, NG_PAD * G_PAD)
        pick = tl.min(tl.min(cand, axis=2), axis=1)
        e_free = e_free & (eid != pick[:, None, None])
        vals = tl.where(kk == r, best[:, None], vals)
        ids = tl.where(kk == r, pick[:, None], ids)

    top = tl.max(tl.max(x, axis=2), axis=1)  # the row max is always the first pick
    e = tl.where(kk < K, tl.exp(vals - top[:, None]), 0.0)
    w = e * (scale / tl.sum(e, axis=1))[:, None]
    out_mask = row_ok[:, None] & (kk < K)
    out_offs = rows[:, None] * K + kk
    tl.store(w_ptr + out_offs, w.to(w_ptr.dtype.element_ty), mask=out_mask)
    tl.store(id_ptr + out_offs, ids.to(tl.int64), mask=out_mask)


def kernel_function(logits, n_group, topk_group, k, routed_scaling_factor):
    logits = logits.contiguous()
    T, E = logits.shape
    assert E % n_group == 0 and 1 <= topk_group <= n_group and 1 <= k <= topk_group * (E // n_group)
    weights = torch.empty((T, k), dtype=logits.dtype, device=logits.device)
    experts = torch.empty((T, k), dtype=torch.int64, device=logits.device)
    if T == 0:
        return weights, experts
    group = E // n_group
    NG_PAD, G_PAD = triton.next_power_of_2(n_group), triton.next_power_of_2(group)
    BLOCK_T = max(1, min(64, TILE // (NG_PAD * G_PAD)))
    _moe_router_kernel[(triton.cdiv(T, BLOCK_T),)](
        logits, weights, experts, T, logits.stride(0), float(routed_scaling_factor),
        N_GROUP=n_group, GROUP=group, TOPK_GROUP=topk_group, K=k,
        BLOCK_T=BLOCK_T, NG_PAD=NG_PAD, G_PAD=G_PAD, K_PAD=triton.next_power_of_2(k), num_warps=4)
    return weights, experts
