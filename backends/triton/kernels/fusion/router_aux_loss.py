"""Switch/Mixtral MoE load-balancing loss with a padding mask, in one pass over the router logits.

  probs = softmax(logits) over experts; f_e = top-k slots routed to e / n_valid; P_e = mean probs[:, e]
  loss = E * sum_e f_e P_e        (padding tokens excluded everywhere)
Returns (loss 0-d, tokens_per_expert int64 [E], router_prob [E]).

Two kernels, deterministic (no atomics):
1. _partials_kernel: a grid of at most MAX_PROGRAMS programs, each walking every P-th tile of
   BLOCK_T tokens x E experts. Per tile it takes the softmax in float32, selects the top k by
   k rounds of "largest remaining logit" (softmax is monotonic; the logits are tie-free), and adds
   the valid tokens' probabilities and selections into per-program [E] accumulators in
   registers. Each program writes one row of partial sums, partial counts and its valid-token
   count. The logits are read once; the partials are a few hundred KiB.
2. _finish_kernel: one program adds the partial rows, divides by the number of valid tokens,
   forms the loss, and rounds the floats once to the logits dtype.
"""
import torch
import triton
import triton.language as tl

TILE = 4096  # logits per tile: BLOCK_T tokens x E_PAD experts
MAX_PROGRAMS = 1024
FINISH_CHUNK = 64  # partial rows per step of the finishing sum


@triton.jit
def _partials_kernel(x_ptr, valid_ptr, psum_ptr, pcnt_ptr, pval_ptr, T, E, stride_xt, stride_xe,
                     K: tl.constexpr, BLOCK_T: tl.constexpr, E_PAD: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    e = tl.arange(0, E_PAD)[None, :]
    e_ok = e < E
    t_local = tl.arange(0, BLOCK_T)
    prob_acc = tl.zeros((E_PAD,), dtype=tl.float32)
    cnt_acc = tl.zeros((E_PAD,), dtype=tl.int32)
    n_valid = tl.zeros((BLOCK_T,), dtype=tl.int32)
    for t0 in range(pid * BLOCK_T, T, nprog * BLOCK_T):
        rows = t0 + t_local
        row_ok = rows < T
        keep = tl.load(valid_ptr + rows, mask=row_ok, other=0) != 0
        x = tl.load(x_ptr + rows.to(tl.int64)[:, None] * stride_xt + e * stride_xe,
                    mask=row_ok[:, None] & e_ok, other=0.0).to(tl.float32)
        x = tl.where(e_ok, x, float("-inf"))
        top = tl.max(x, axis=1)
        ex = tl.exp(x - top[:, None])
        probs = ex / tl.sum(ex, axis=1)[:, None]
        prob_acc += tl.sum(tl.where(keep[:, None], probs, 0.0), axis=0)
        free = e_ok
        for r in tl.static_range(K):
            best = tl.max(tl.where(free, x, float("-inf")), axis=1)
            pick = tl.min(tl.where(free & (x == best[:, None]), e, E_PAD), axis=1)
            free = free & (e != pick[:, None])
        chosen = e_ok & (free == 0)
        cnt_acc += tl.sum((chosen & keep[:, None]).to(tl.int32), axis=0)
        n_valid += keep.to(tl.int32)
    tl.store(psum_ptr + pid * E_PAD + tl.arange(0, E_PAD), prob_acc)
    tl.store(pcnt_ptr + pid * E_PAD + tl.arange(0, E_PAD), cnt_acc)
    tl.store(pval_ptr + pid, tl.sum(n_valid, axis=0))


@triton.jit
def _finish_kernel(psum_ptr, pcnt_ptr, pval_ptr, loss_ptr, counts_ptr, prob_ptr, NP, E,
                   CHUNK: tl.constexpr, E_PAD: tl.constexpr):
    e = tl.arange(0, E_PAD)
    c = tl.arange(0, CHUNK)
    prob_sum = tl.zeros((E_PAD,), dtype=tl.float32)
    cnt = tl.zeros((E_PAD,), dtype=tl.int64)
    n_valid = tl.zeros((CHUNK,), dtype=tl.int64)
    for p0 in range(0, NP, CHUNK):
        p = p0 + c
        p_ok = p < NP
        offs = p[:, None] * E_PAD + e[None, :]
        prob_sum += tl.sum(tl.load(psum_ptr + offs, mask=p_ok[:, None], other=0.0), axis=0)
        cnt += tl.sum(tl.load(pcnt_ptr + offs, mask=p_ok[:, None], other=0).to(tl.int64), axis=0)
        n_valid += tl.load(pval_ptr + p, mask=p_ok, other=0).to(tl.int64)
    n = tl.sum(n_valid, axis=0).to(tl.float32)
    router_prob = prob_sum / n
    loss = E * tl.sum(tl.where(e < E, cnt.to(tl.float32) / n * router_prob, 0.0), axis=0)
    tl.store(counts_ptr + e, cnt, mask=e < E)
    tl.store(prob_ptr + e, router_prob.to(prob_ptr.dtype.element_ty), mask=e < E)
    tl.store(loss_ptr, loss.to(loss_ptr.dtype.element_ty))


def kernel_function(logits, valid, k):
    T, E = logits.shape
    assert 1 <= k <= E and valid.stride(0) == 1
    loss = torch.empty((), dtype=logits.dtype, device=logits.device)
    counts = torch.empty((E,), dtype=torch.int64, device=logits.device)
    router_prob = torch.empty((E,), dtype=logits.dtype, device=logits.device)
    E_PAD = triton.next_power_of_2(E)
    BLOCK_T = max(1, min(64, TILE // E_PAD))
    num_programs = max(1, min(triton.cdiv(T, BLOCK_T), MAX_PROGRAMS))
    psum = torch.empty((num_programs, E_PAD), dtype=torch.float32, device=logits.device)
    pcnt = torch.empty((num_programs, E_PAD), dtype=torch.int32, device=logits.device)
    pval = torch.empty((num_programs,), dtype=torch.int32, device=logits.device)
    _partials_kernel[(num_programs,)](logits, valid, psum, pcnt, pval, T, E, logits.stride(0), logits.stride(1),
                                      K=k, BLOCK_T=BLOCK_T, E_PAD=E_PAD, num_warps=4)
    _finish_kernel[(1,)](psum, pcnt, pval, loss, counts, router_prob, num_programs, E,
                         CHUNK=FINISH_CHUNK, E_PAD=E_PAD, num_warps=4)
    return loss, counts, router_prob
