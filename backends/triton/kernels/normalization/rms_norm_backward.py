import torch
import triton
import triton.language as tl

EPS = 1e-6
MAX_FUSED = 8192  # rows up to this many elements are held in registers
LOOP_BLOCK = 4096
MAX_PROGRAMS = 512  # row strips; each writes one float32 partial row of dweight


@triton.jit
def _rms_bwd_rows(dy_ptr, x_ptr, w_ptr, dx_ptr, part_ptr, R, C, rows_per_prog, eps,
                  BLOCK: tl.constexpr, SINGLE: tl.constexpr):
    # Each program takes a strip of rows. Per row: rstd = 1/sqrt(mean(x^2) + eps), xhat = x rstd,
    # g = dy w, dx = rstd (g - xhat mean(g xhat)); the strip's dweight contribution sum(dy xhat)
    # is accumulated in float32 and written to this program's partial row.
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    row0 = pid.to(tl.int64) * rows_per_prog
    n_rows = tl.minimum(rows_per_prog, R - row0)
    part_row = part_ptr + pid.to(tl.int64) * C
    if SINGLE:
        mask = cols < C
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        dw = tl.zeros((BLOCK,), dtype=tl.float32)
        for i in range(0, n_rows):
            base = (row0 + i) * C
            x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            dy = tl.load(dy_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            rstd = 1.0 / tl.sqrt_rn(tl.sum(x * x, axis=0) / C + eps)
            xhat = x * rstd
            g = dy * w
            c1 = tl.sum(g * xhat, axis=0) / C
            tl.store(dx_ptr + base + cols, (rstd * (g - xhat * c1)).to(dx_ptr.dtype.element_ty), mask=mask)
            dw += dy * xhat
        tl.store(part_row + cols, dw, mask=mask)
    else:
        for start in range(0, C, BLOCK):
            offs = start + cols
            tl.store(part_row + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < C)
        for i in range(0, n_rows):
            base = (row0 + i) * C
            ss = tl.zeros((BLOCK,), dtype=tl.float32)
            for start in range(0, C, BLOCK):
                offs = start + cols
                x = tl.load(x_ptr + base + offs, mask=offs < C, other=0.0).to(tl.float32)
                ss += x * x
            rstd = 1.0 / tl.sqrt_rn(tl.sum(ss, axis=0) / C + eps)
            gx = tl.zeros((BLOCK,), dtype=tl.float32)
            for start in range(0, C, BLOCK):
                offs = start + cols
                m = offs < C
                x = tl.load(x_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
                dy = tl.load(dy_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
                w = tl.load(w_ptr + offs, mask=m, other=0.0).to(tl.float32)
                gx += dy * w * x
            c1 = tl.sum(gx, axis=0) * rstd / C
            for start in range(0, C, BLOCK):
                offs = start + cols
                m = offs < C
                x = tl.load(x_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
                dy = tl.load(dy_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
                w = tl.load(w_ptr + offs, mask=m, other=0.0).to(tl.float32)
                xhat = x * rstd
                tl.store(dx_ptr + base + offs, (rstd * (dy * w - xhat * c1)).to(dx_ptr.dtype.element_ty), mask=m)
                p = tl.load(part_row + offs, mask=m, other=0.0)
                tl.store(part_row + offs, p + dy * xhat, mask=m)


@triton.jit
def _reduce_partials(part_ptr, dw_ptr, P, C, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    # dweight[c] = sum over the P partial rows, one program per column block.
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < C
    acc = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    for p0 in range(0, P, BLOCK_P):
        rows = p0 + tl.arange(0, BLOCK_P)
        m = (rows < P)[:, None] & cmask[None, :]
        acc += tl.load(part_ptr + rows[:, None].to(tl.int64) * C + cols[None, :], mask=m, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(acc, axis=0).to(dw_ptr.dtype.element_ty), mask=cmask)


def kernel_function(dy, x, weight):
    dy = dy.contiguous()
    x = x.contiguous()
    weight = weight.contiguous()
    R, C = x.shape
    dx = torch.empty_like(x)
    dweight = torch.empty_like(weight)
    P = max(1, min(R, MAX_PROGRAMS))
    rows_per_prog = triton.cdiv(R, P)
    P = triton.cdiv(R, rows_per_prog)
    partials = torch.empty((P, C), dtype=torch.float32, device=x.device)
    single = triton.next_power_of_2(C) <= MAX_FUSED
    BLOCK = triton.next_power_of_2(C) if single else LOOP_BLOCK
    num_warps = 4 if BLOCK <= 1024 else (8 if BLOCK <= 4096 else 16)
    _rms_bwd_rows[(P,)](dy, x, weight, dx, partials, R, C, rows_per_prog, EPS, BLOCK=BLOCK, SINGLE=single,
                        num_warps=num_warps)
    BLOCK_C = min(triton.next_power_of_2(C), 128)
    _reduce_partials[(triton.cdiv(C, BLOCK_C),)](partials, dweight, P, C, BLOCK_P=32, BLOCK_C=BLOCK_C, num_warps=4)
    return dx, dweight
