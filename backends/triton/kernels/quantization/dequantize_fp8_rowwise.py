"""Row-wise FP8 (E4M3, "e4m3fn") dequantization: x[r, c] = e4m3(q[r, c]) * scale[r], from raw uint8
bit patterns and float32 row scales, to the task's output dtype (float32, float16 or bfloat16).

Memory-bound and element-wise. The codes are read through a float8_e4m3fn view of the uint8
tensor (a reinterpretation, no copy), so the decode is the hardware's E4M3 -> float conversion,
exact in float32; the product with the row scale is one float32 rounding and the store one more
rounding to the output dtype, as the contract allows. Each program converts BLOCK consecutive
codes of one row and loads that row's scale once.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK = 2048
OUT_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


@triton.jit
def _round_to_bf16_rne(x):
    # float32 -> nearest bfloat16 value (ties to even), still as float32. Only for the Triton
    # interpreter, whose float32 -> bfloat16 cast truncates; on GPUs the cast rounds to nearest.
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _dequant_rows(q_ptr, s_ptr, x_ptr, C, COL_BLOCKS, stride_qr, stride_qc, stride_xr,
                  BLOCK: tl.constexpr, RNE_BF16: tl.constexpr):
    pid = tl.program_id(0)
    row = (pid // COL_BLOCKS).to(tl.int64)
    cols = (pid % COL_BLOCKS) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < C
    v = tl.load(q_ptr + row * stride_qr + cols * stride_qc, mask=mask, other=0.0).to(tl.float32)
    x = v * tl.load(s_ptr + row).to(tl.float32)
    if RNE_BF16:
        x = _round_to_bf16_rne(x)
    tl.store(x_ptr + row * stride_xr + cols, x.to(x_ptr.dtype.element_ty), mask=mask)


def kernel_function(q, scale, out_dtype):
    R, C = q.shape
    dtype = OUT_DTYPES[out_dtype]
    x = torch.empty((R, C), dtype=dtype, device=q.device)
    if x.numel() == 0:
        return x
    codes = q.view(torch.float8_e4m3fn)
    BLOCK = min(triton.next_power_of_2(C), MAX_BLOCK)
    col_blocks = triton.cdiv(C, BLOCK)
    _dequant_rows[(R * col_blocks,)](codes, scale, x, C, col_blocks, codes.stride(0), codes.stride(1), x.stride(0),
                                     BLOCK=BLOCK, RNE_BF16=q.device.type == "cpu" and dtype == torch.bfloat16,
                                     num_warps=4)
    return x
