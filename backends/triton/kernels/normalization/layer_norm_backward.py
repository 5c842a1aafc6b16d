"""Backward of F.layer_norm over the last dim of [R, C] (eps 1e-5): (dy, x, weight) ->
(dx, dweight, dbias), with the row statistics recomputed from x.

Per row, with xhat = (x - mean) * rstd and g = dy * weight:
    dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
and over rows dweight = sum dy * xhat, dbias = sum dy (column sums).

Two Triton passes, the standard split for this op:
  1. a fixed number of programs (PARTIALS, at most one per row) each take a contiguous block of
     rows; a row is held in registers (x, dy, weight: one read of each), its mean and variance
     are taken in two passes over the registers, dx is written, and dy * xhat and dy are added
     into per-program float32 column accumulators that are written out once as a partial row;
  2. one program per column block adds the PARTIALS partial rows of dweight and dbias in a fixed
     order (deterministic, no atomics) and rounds once to the weight dtype.
Column sums split into PARTIALS pieces are also far more accurate than one float32 chain per
column. Rows up to MAX_COLS elements fit in registers (the task's longest is 4096).
"""
import torch
import triton
import triton.language as tl

EPS: tl.constexpr = tl.constexpr(1e-5)
MAX_COLS = 8192
PARTIALS = 256  # pass-1 programs (about two per SM on an H100); their partial rows are summed in pass 2


@triton.jit
def _rows_backward(dy_ptr, x_ptr, w_ptr, dx_ptr, pdw_ptr, pdb_ptr, R, C, rows_per_prog,
                   stride_dy, stride_x, stride_dx, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_C)
    col_ok = cols < C
    w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    dw_acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    db_acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    row_start = pid.to(tl.int64) * rows_per_prog
    n_rows = tl.minimum(row_start + rows_per_prog, R) - row_start
    for i in range(0, n_rows):
        r = row_start + i
        x = tl.load(x_ptr + r * stride_x + cols, mask=col_ok, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + r * stride_dy + cols, mask=col_ok, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / C
        xc = tl.where(col_ok, x - mean, 0.0)
        rstd = tl.rsqrt(tl.sum(xc * xc, axis=0) / C + EPS)
        xhat = xc * rstd
        g = dy * w
        mean_g = tl.sum(g, axis=0) / C
        mean_gx = tl.sum(g * xhat, axis=0) / C
        dx = rstd * (g - mean_g - xhat * mean_gx)
        tl.store(dx_ptr + r * stride_dx + cols, dx.to(dx_ptr.dtype.element_ty), mask=col_ok)
        dw_acc += dy * xhat
        db_acc += dy
    tl.store(pdw_ptr + pid * C + cols, dw_acc, mask=col_ok)
    tl.store(pdb_ptr + pid * C + cols, db_acc, mask=col_ok)


@triton.jit
def _sum_partials(pdw_ptr, pdb_ptr, dw_ptr, db_ptr, P, C, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_ok = cols < C
    p = tl.arange(0, BLOCK_P)
    dw = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    db = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    for p0 in range(0, P, BLOCK_P):
        rows = p0 + p
        mask = (rows < P)[:, None] & col_ok[None, :]
        offs = rows[:, None] * C + cols[None, :]
        dw += tl.load(pdw_ptr + offs, mask=mask, other=0.0)
        db += tl.load(pdb_ptr + offs, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0).to(dw_ptr.dtype.element_ty), mask=col_ok)
    tl.store(db_ptr + cols, tl.sum(db, axis=0).to(db_ptr.dtype.element_ty), mask=col_ok)


def kernel_function(dy, x, weight):
    R, C = x.shape
    assert 0 < C <= MAX_COLS, f"rows of 1..{MAX_COLS} elements are held in registers"
    assert x.stride(1) == 1 and dy.stride(1) == 1 and weight.stride(0) == 1, "rows must be contiguous"
    dx = torch.empty((R, C), dtype=x.dtype, device=x.device)
    dweight = torch.empty((C,), dtype=weight.dtype, device=x.device)
    dbias = torch.empty((C,), dtype=weight.dtype, device=x.device)
    P = max(1, min(R, PARTIALS))
    rows_per_prog = triton.cdiv(R, P)
    P = max(1, triton.cdiv(R, rows_per_prog))
    pdw = torch.empty((P, C), dtype=torch.float32, device=x.device)
    pdb = torch.empty((P, C), dtype=torch.float32, device=x.device)
    BLOCK_C = triton.next_power_of_2(C)
    num_warps = 4 if BLOCK_C <= 1024 else (8 if BLOCK_C <= 4096 else 16)
    _rows_backward[(P,)](dy, x, weight, dx, pdw, pdb, R, C, rows_per_prog, dy.stride(0), x.stride(0), dx.stride(0),
                         BLOCK_C=BLOCK_C, num_warps=num_warps)
    BLOCK_C2 = min(64, BLOCK_C)
    _sum_partials[(triton.cdiv(C, BLOCK_C2),)](pdw, pdb, dweight, dbias, P, C, BLOCK_P=64, BLOCK_C=BLOCK_C2, num_warps=4)
    return dx, dweight, dbias
