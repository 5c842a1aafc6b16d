import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _bf16_bits_to_f32(bits):
    # bfloat16 is the top half of a float32: widen the raw 16 bits (exact, subnormals included).
    return (bits.to(tl.int32) << 16).to(tl.float32, bitcast=True)


@triton.jit
def _f32_to_bf16_bits(f):
    # Round to nearest even on the raw bits (what the hardware conversion does); NaN kept quiet.
    b = f.to(tl.int32, bitcast=True)
    r = (b + (((b >> 16) & 1) + 0x7FFF)) >> 16
    return tl.where(f != f, 0x7FC0, r).to(tl.int16)


@triton.jit
def _hypot_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, BF16_BITS: tl.constexpr):
    # hypot = m sqrt(1 + (s / m)^2) with m = max(|x|, |y|), s = min(|x|, |y|): the ratio is in
    # [0, 1], so nothing is squared outside float32's range (x^2 itself would overflow for
    # |x| > 1.8e19 and underflow for |x| < 1e-23). Special values as IEEE hypot: an infinite
    # argument gives +inf even next to a NaN; otherwise a NaN gives NaN; hypot(0, 0) = 0.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if BF16_BITS:
        ax = tl.abs(_bf16_bits_to_f32(tl.load(x_ptr + offs, mask=mask, other=0)))
        ay = tl.abs(_bf16_bits_to_f32(tl.load(y_ptr + offs, mask=mask, other=0)))
    else:
        ax = tl.abs(tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32))
        ay = tl.abs(tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32))
    is_nan = (ax != ax) | (ay != ay)
    is_inf = (ax == float("inf")) | (ay == float("inf"))
    m = tl.where(ax > ay, ax, ay)
    s = tl.where(ax > ay, ay, ax)
    safe_m = tl.where(m > 0.0, m, 1.0)
    r = s / safe_m
    h = m * tl.sqrt(1.0 + r * r)
    h = tl.where(m > 0.0, h, 0.0)
    h = tl.where(is_nan, float("nan"), h)
    h = tl.where(is_inf, float("inf"), h)
    if BF16_BITS:
        tl.store(out_ptr + offs, _f32_to_bf16_bits(h), mask=mask)
    else:
        tl.store(out_ptr + offs, h.to(out_ptr.dtype.element_ty), mask=mask)


def kernel_function(x, y):
    x = x.contiguous()
    y = y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return out
    # Triton interpreter only: its bfloat16 <-> float32 conversions mishandle subnormals (2^-133 ..
    # 2^-126 come back as wrong values), and this task's inputs hold bfloat16 subnormals. There the
    # kernel moves raw 16-bit patterns and converts them itself, exactly as the GPU's cvt does.
    bits = x.device.type == "cpu" and x.dtype == torch.bfloat16
    if bits:
        x, y, o = x.view(torch.int16), y.view(torch.int16), out.view(torch.int16)
    else:
        o = out
    _hypot_kernel[(triton.cdiv(n, BLOCK),)](x, y, o, n, BLOCK=BLOCK, BF16_BITS=bits, num_warps=4)
    return out
