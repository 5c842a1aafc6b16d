import torch
import triton
import triton.language as tl

MAX_FUSED = 8192   # rows up to this many elements are held in registers: one read of x
LOOP_BLOCK = 4096  # longer rows are streamed twice in blocks of this size


@triton.jit
def _l2_norm_rows_kernel(x_ptr, y_ptr, C, stride_x, BLOCK: tl.constexpr, SINGLE: tl.constexpr):
    # One program per row. norm = s sqrt(sum (x / s)^2) with s = max |x| of the row: every scaled
    # square is <= 1, so rows at 2^+-100 neither overflow nor underflow (x^2 would for
    # |x| > 1.8e19 or < 1e-23). An all-zero row has s = 0 and gives exactly 0.
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    cols = tl.arange(0, BLOCK)
    if SINGLE:
        mask = cols < C
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        s = tl.max(tl.abs(x), axis=0)
        safe = tl.where(s > 0.0, s, 1.0)
        v = x / safe
        total = tl.sum(v * v, axis=0)
    else:
        m = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, C, BLOCK):
            offs = start + cols
            x = tl.load(x_row + offs, mask=offs < C, other=0.0).to(tl.float32)
            m = tl.maximum(m, tl.abs(x))
        s = tl.max(m, axis=0)
        safe = tl.where(s > 0.0, s, 1.0)
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, C, BLOCK):
            offs = start + cols
            v = tl.load(x_row + offs, mask=offs < C, other=0.0).to(tl.float32) / safe
            acc += v * v
        total = tl.sum(acc, axis=0)
    norm = s * tl.sqrt(total)
    tl.store(y_ptr + row, norm.to(y_ptr.dtype.element_ty))


def kernel_function(x):
    x = x.contiguous()
    R, C = x.shape
    y = torch.empty((R,), dtype=x.dtype, device=x.device)
    if R == 0:
        return y
    single = triton.next_power_of_2(C) <= MAX_FUSED
    BLOCK = triton.next_power_of_2(C) if single else LOOP_BLOCK
    num_warps = 4 if BLOCK <= 1024 else (8 if BLOCK <= 4096 else 16)
    _l2_norm_rows_kernel[(R,)](x, y, C, x.stride(0), BLOCK=BLOCK, SINGLE=single, num_warps=num_warps)
    return y
