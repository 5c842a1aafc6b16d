import torch
import triton
import triton.language as tl


@triton.jit
def _embedding_kernel(idx_ptr, w_ptr, y_ptr, T, D, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    # A [BLOCK_T tokens, BLOCK_D features] tile: gather BLOCK_T table rows, copy them out.
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    t_ok = t < T
    rows = tl.load(idx_ptr + t, mask=t_ok, other=0).to(tl.int64)
    m = t_ok[:, None] & (d < D)[None, :]
    vals = tl.load(w_ptr + rows[:, None] * D + d[None, :], mask=m)
    tl.store(y_ptr + t.to(tl.int64)[:, None] * D + d[None, :], vals, mask=m)


def kernel_function(indices, weight):
    indices = indices.contiguous()
    weight = weight.contiguous()
    v, d = weight.shape
    y = torch.empty((*indices.shape, d), dtype=weight.dtype, device=weight.device)
    t = indices.numel()
    BLOCK_D = min(triton.next_power_of_2(d), 1024)
    BLOCK_T = max(1, 4096 // BLOCK_D)
    grid = (triton.cdiv(t, BLOCK_T), triton.cdiv(d, BLOCK_D))
    _embedding_kernel[grid](indices, weight, y, t, d, BLOCK_T=BLOCK_T, BLOCK_D=BLOCK_D, num_warps=4)
    return y
