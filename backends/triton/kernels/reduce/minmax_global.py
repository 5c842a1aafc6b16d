"""Global (min, max) of a 2-D tensor [R, C], returned stacked as a [2] tensor of its dtype.

Two Triton passes (a global reduction needs a second level, and partials keep it deterministic
without atomics or a zero-filled buffer). Pass 1: the tensor is cut into about TARGET_PROGRAMS
rectangles (row groups x column chunks, so a single very long row is split as well as many short
ones); each program streams its rectangle in [BLOCK_R, BLOCK_C] tiles, columns contiguous, keeping
a per-lane running min and max, and writes one partial pair. Pass 2, one program, reduces the
partials. Min and max select inputs, so widening to float32 and narrowing back is exact. The task
guarantees NaN-free inputs; masked lanes load +inf / -inf, which never win.
"""
import torch
import triton
import triton.language as tl

TARGET_PROGRAMS = 1024  # pass-1 programs: several per SM on an H100
MAX_BLOCK_C = 1024
TILE = 4096  # elements per loaded tile
MAX_CHUNK_C = 16384  # columns per rectangle: longer rows are split across programs


@triton.jit
def _partial_minmax(x_ptr, pmin_ptr, pmax_ptr, R, C, rows_per_group, cols_per_chunk, col_chunks,
                    stride_xr, stride_xc, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    row_start = (pid // col_chunks) * rows_per_group
    col_start = (pid % col_chunks) * cols_per_chunk
    row_end = tl.minimum(row_start + rows_per_group, R)
    col_end = tl.minimum(col_start + cols_per_chunk, C)
    r = tl.arange(0, BLOCK_R)
    c = tl.arange(0, BLOCK_C)
    lo = tl.full((BLOCK_R, BLOCK_C), float("inf"), tl.float32)
    hi = tl.full((BLOCK_R, BLOCK_C), float("-inf"), tl.float32)
    for r0 in range(row_start, row_end, BLOCK_R):
        rows = r0 + r
        row_ok = rows < row_end
        base = x_ptr + rows[:, None].to(tl.int64) * stride_xr
        for c0 in range(col_start, col_end, BLOCK_C):
            cols = c0 + c
            mask = row_ok[:, None] & (cols < col_end)[None, :]
            x = tl.load(base + cols[None, :] * stride_xc, mask=mask, other=0.0).to(tl.float32)
            lo = tl.minimum(lo, tl.where(mask, x, float("inf")))
            hi = tl.maximum(hi, tl.where(mask, x, float("-inf")))
    tl.store(pmin_ptr + pid, tl.min(tl.min(lo, axis=1), axis=0))
    tl.store(pmax_ptr + pid, tl.max(tl.max(hi, axis=1), axis=0))


@triton.jit
def _finish_minmax(pmin_ptr, pmax_ptr, y_ptr, P, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    lo = tl.full((BLOCK,), float("inf"), tl.float32)
    hi = tl.full((BLOCK,), float("-inf"), tl.float32)
    for p0 in range(0, P, BLOCK):
        m = (p0 + offs) < P
        lo = tl.minimum(lo, tl.load(pmin_ptr + p0 + offs, mask=m, other=float("inf")))
        hi = tl.maximum(hi, tl.load(pmax_ptr + p0 + offs, mask=m, other=float("-inf")))
    tl.store(y_ptr, tl.min(lo, axis=0).to(y_ptr.dtype.element_ty))
    tl.store(y_ptr + 1, tl.max(hi, axis=0).to(y_ptr.dtype.element_ty))


def kernel_function(x):
    R, C = x.shape
    assert R * C > 0, "min/max of an empty tensor is undefined"
    y = torch.empty((2,), dtype=x.dtype, device=x.device)
    BLOCK_C = min(triton.next_power_of_2(C), MAX_BLOCK_C)
    BLOCK_R = max(TILE // BLOCK_C, 1)
    cols_per_chunk = triton.cdiv(min(C, MAX_CHUNK_C), BLOCK_C) * BLOCK_C
    col_chunks = triton.cdiv(C, cols_per_chunk)
    row_groups = max(1, min(triton.cdiv(R, BLOCK_R), TARGET_PROGRAMS // col_chunks))
    rows_per_group = triton.cdiv(triton.cdiv(R, row_groups), BLOCK_R) * BLOCK_R
    programs = triton.cdiv(R, rows_per_group) * col_chunks
    pmin = torch.empty((programs,), dtype=torch.float32, device=x.device)
    pmax = torch.empty((programs,), dtype=torch.float32, device=x.device)
    _partial_minmax[(programs,)](x, pmin, pmax, R, C, rows_per_group, cols_per_chunk, col_chunks,
                                 x.stride(0), x.stride(1), BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, num_warps=8)
    _finish_minmax[(1,)](pmin, pmax, y, programs, BLOCK=min(triton.next_power_of_2(programs), 1024), num_warps=4)
    return y
