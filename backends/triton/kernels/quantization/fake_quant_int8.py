"""Per-tensor int8 fake quantization (quantize then dequantize, as QAT inserts it):
    q = clamp(round_half_to_even(x / scale) + zero_point, -128, 127)
    y = (q - zero_point) * scale
with a float32 0-dim scale tensor and a Python int zero point; y in the dtype of x.

Memory-bound and element-wise: each program handles BLOCK consecutive elements of one row. The
scale is read from its tensor inside the kernel (no host synchronisation to fetch it). x / scale
uses an IEEE-rounded division (div_rn; Triton's `/` may be approximate on GPUs, which would move
values across rounding ties), rounding is half-to-even by an explicit tie test, and the product
(q - zp) * scale is one float32 rounding before the single rounding to the output dtype.
"""
import torch
import triton
import triton.language as tl

QMIN, QMAX = -128, 127
MAX_BLOCK = 2048


@triton.jit
def _round_half_even(v):
    r = tl.floor(v + 0.5)
    tie = (r - v) == 0.5  # exact ties (v + 0.5 integral) go to the even neighbour
    odd = (r - 2.0 * tl.floor(r * 0.5)) != 0.0
    return tl.where(tie & odd, r - 1.0, r)


@triton.jit
def _round_to_bf16_rne(x):
    # float32 -> nearest bfloat16 value (ties to even), still as float32. Only for the Triton
    # interpreter, whose float32 -> bfloat16 cast truncates; on GPUs the cast rounds to nearest.
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _fake_quant(x_ptr, s_ptr, y_ptr, zp, C, COL_BLOCKS, stride_xr, stride_xc, stride_yr,
                QMIN: tl.constexpr, QMAX: tl.constexpr, BLOCK: tl.constexpr, RNE_BF16: tl.constexpr):
    pid = tl.program_id(0)
    row = (pid // COL_BLOCKS).to(tl.int64)
    cols = (pid % COL_BLOCKS) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < C
    x = tl.load(x_ptr + row * stride_xr + cols * stride_xc, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(s_ptr).to(tl.float32)
    q = _round_half_even(tl.math.div_rn(x, s)) + zp
    q = tl.minimum(tl.maximum(q, QMIN), QMAX)
    y = (q - zp) * s
    if RNE_BF16:
        y = _round_to_bf16_rne(y)
    tl.store(y_ptr + row * stride_yr + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(x, scale, zero_point):
    R, C = x.shape
    y = torch.empty((R, C), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    BLOCK = min(triton.next_power_of_2(C), MAX_BLOCK)
    col_blocks = triton.cdiv(C, BLOCK)
    # the zero point goes in as a float (exact for -128..127), the type the arithmetic needs
    _fake_quant[(R * col_blocks,)](x, scale, y, float(zero_point), C, col_blocks, x.stride(0), x.stride(1), y.stride(0),
                                   QMIN=QMIN, QMAX=QMAX, BLOCK=BLOCK,
                                   RNE_BF16=x.device.type == "cpu" and x.dtype == torch.bfloat16, num_warps=4)
    return y
