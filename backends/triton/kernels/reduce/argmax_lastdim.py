import torch
import triton
import triton.language as tl

MAX_BLOCK = 4096  # columns per loaded block; longer rows are streamed


@triton.jit
def _first_max(v1, i1, v2, i2):
    # torch's order: NaN above everything, equal values go to the smaller index.
    nan1 = v1 != v1
    nan2 = v2 != v2
    first = i1 < i2
    take1 = tl.where(nan1, ~nan2 | first, ~nan2 & ((v1 > v2) | ((v1 == v2) & first)))
    return tl.where(take1, v1, v2), tl.where(take1, i1, i2)


@triton.jit
def _argmax_kernel(x_ptr, val_ptr, idx_ptr, C, stride_x, BLOCK: tl.constexpr):
    # One program per row. Each lane keeps its own (max, index) across column blocks: a later
    # block always has larger indices, so a lane takes a new value only if it is strictly
    # greater or the first NaN. One tie-aware tree reduction over the lanes ends the row.
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    cols = tl.arange(0, BLOCK)
    best_v = tl.full((BLOCK,), float("-inf"), tl.float32)
    best_i = tl.zeros((BLOCK,), dtype=tl.int32)  # an all -inf row has its first max at 0
    for start in range(0, C, BLOCK):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs < C, other=float("-inf")).to(tl.float32)
        take = (x > best_v) | ((x != x) & (best_v == best_v))
        best_v = tl.where(take, x, best_v)
        best_i = tl.where(take, offs, best_i)
    v, i = tl.reduce((best_v, best_i), 0, _first_max)
    tl.store(val_ptr + row, v.to(val_ptr.dtype.element_ty))  # exact: v is one of the inputs
    tl.store(idx_ptr + row, i.to(tl.int64))


def kernel_function(x):
    x = x.contiguous()
    C = x.shape[-1]
    values = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
    indices = torch.empty(x.shape[:-1], dtype=torch.int64, device=x.device)
    if values.numel() == 0:
        return values, indices
    x2 = x.view(-1, C)
    BLOCK = min(triton.next_power_of_2(max(C, 1)), MAX_BLOCK)
    num_warps = 4 if BLOCK <= 1024 else 8
    _argmax_kernel[(x2.shape[0],)](x2, values, indices, C, x2.stride(0), BLOCK=BLOCK, num_warps=num_warps)
    return values, indices
