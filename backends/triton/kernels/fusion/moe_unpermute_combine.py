"""MoE combine: y[t] = sum_j w[t, j] * expert_out[row_index[t, j]], back from expert-contiguous to token order.

A gather-reduce: one program per (token, BLOCK_H slice of the hidden dimension) loads the token's
k row indices and gating weights once (scalars), gathers the k expert-output rows (each a
contiguous run, so every load is coalesced) and sums them in float32 in slot order j = 0..k-1,
writing the token's slice once. k is a compile-time constant, so the slot loop is unrolled and
all k row loads are in flight together.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK_H = 2048


@triton.jit
def _unpermute_combine_kernel(x_ptr, idx_ptr, w_ptr, y_ptr, H, stride_xr, stride_xh, stride_it, stride_ik,
                              stride_wt, stride_wk, stride_yt, K: tl.constexpr, BLOCK_H: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    ok = offs < H
    acc = tl.zeros((BLOCK_H,), dtype=tl.float32)
    for j in tl.static_range(K):
        row = tl.load(idx_ptr + t * stride_it + j * stride_ik)
        w = tl.load(w_ptr + t * stride_wt + j * stride_wk).to(tl.float32)
        acc += w * tl.load(x_ptr + row * stride_xr + offs * stride_xh, mask=ok, other=0.0).to(tl.float32)
    tl.store(y_ptr + t * stride_yt + offs, acc.to(y_ptr.dtype.element_ty), mask=ok)


def kernel_function(expert_out, row_index, weights):
    T, K = row_index.shape
    H = expert_out.shape[1]
    y = torch.empty((T, H), dtype=expert_out.dtype, device=expert_out.device)
    if y.numel() == 0:
        return y
    BLOCK_H = min(triton.next_power_of_2(H), MAX_BLOCK_H)
    grid = (T, triton.cdiv(H, BLOCK_H))
    _unpermute_combine_kernel[grid](
        expert_out, row_index, weights, y, H, expert_out.stride(0), expert_out.stride(1),
        row_index.stride(0), row_index.stride(1), weights.stride(0), weights.stride(1), y.stride(0),
        K=K, BLOCK_H=BLOCK_H, num_warps=4 if BLOCK_H <= 1024 else 8)
    return y
