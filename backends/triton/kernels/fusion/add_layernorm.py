import torch
import triton
import triton.language as tl

EPS = 1e-5
MAX_FUSED = 8192  # rows up to this many elements are held in registers: one read of x and residual
LOOP_BLOCK = 4096  # longer rows are streamed in blocks of this size


@triton.jit
def _add_layernorm_kernel(x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, h_ptr, D,
                          stride_x, stride_r, stride_y, stride_h, eps,
                          BLOCK: tl.constexpr, SINGLE: tl.constexpr):
    # One program per row. h = x + residual is formed in float32 and normalised from that
    # float32 value (not from its rounding to the output dtype); h itself is stored rounded.
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    r_row = r_ptr + row * stride_r
    y_row = y_ptr + row * stride_y
    h_row = h_ptr + row * stride_h
    cols = tl.arange(0, BLOCK)
    if SINGLE:
        mask = cols < D
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + cols, mask=mask, other=0.0).to(tl.float32)
        h = x + r
        tl.store(h_row + cols, h.to(h_ptr.dtype.element_ty), mask=mask)
        mean = tl.sum(h, axis=0) / D
        hc = tl.where(mask, h - mean, 0.0)
        var = tl.sum(hc * hc, axis=0) / D  # two-pass: centred before squaring
        rstd = tl.rsqrt(var + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (hc * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
    else:
        # Pass 1: h written out and summed. Pass 2: centred squares. Pass 3: normalise. Passes 2
        # and 3 recompute h = x + residual in float32 (bit-identical to pass 1) rather than
        # re-reading the rounded h.
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, D, BLOCK):
            offs = start + cols
            mask = offs < D
            h = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32) + \
                tl.load(r_row + offs, mask=mask, other=0.0).to(tl.float32)
            tl.store(h_row + offs, h.to(h_ptr.dtype.element_ty), mask=mask)
            acc += h
        mean = tl.sum(acc, axis=0) / D
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, D, BLOCK):
            offs = start + cols
            mask = offs < D
            h = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32) + \
                tl.load(r_row + offs, mask=mask, other=0.0).to(tl.float32)
            hc = tl.where(mask, h - mean, 0.0)
            acc += hc * hc
        rstd = tl.rsqrt(tl.sum(acc, axis=0) / D + eps)
        for start in range(0, D, BLOCK):
            offs = start + cols
            mask = offs < D
            h = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32) + \
                tl.load(r_row + offs, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
            tl.store(y_row + offs, ((h - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x, residual, weight, bias):
    x = x.contiguous()
    residual = residual.contiguous()
    weight = weight.contiguous()
    bias = bias.contiguous()
    D = x.shape[-1]
    y = torch.empty_like(x)
    h = torch.empty_like(x)
    if x.numel() == 0:
        return y, h
    x2, r2, y2, h2 = x.view(-1, D), residual.view(-1, D), y.view(-1, D), h.view(-1, D)
    R = x2.shape[0]
    single = triton.next_power_of_2(D) <= MAX_FUSED
    BLOCK = triton.next_power_of_2(D) if single else LOOP_BLOCK
    num_warps = 4 if BLOCK <= 1024 else (8 if BLOCK <= 4096 else 16)
    _add_layernorm_kernel[(R,)](x2, r2, weight, bias, y2, h2, D,
                                x2.stride(0), r2.stride(0), y2.stride(0), h2.stride(0), EPS,
                                BLOCK=BLOCK, SINGLE=single, num_warps=num_warps)
    return y, h
