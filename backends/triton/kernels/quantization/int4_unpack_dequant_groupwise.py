import torch
import triton
import triton.language as tl

GROUP = 128


@triton.jit
def _round_to_bf16_rne(x):
    # float32 -> nearest bfloat16 value (ties to even), still as float32. Only for the Triton
    # interpreter, whose float32 -> bfloat16 cast truncates; on GPUs the cast rounds to nearest.
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _unpack_dequant(qw_ptr, s_ptr, z_ptr, w_ptr, K, stride_qw, stride_s, stride_z, stride_w,
                    GROUP: tl.constexpr, BLOCK: tl.constexpr, RNE_BF16: tl.constexpr):
    # grid (rows, K / BLOCK): each program writes BLOCK consecutive outputs of one row. Output k
    # comes from byte k // 2 (low nibble for even k, high for odd k), group k // GROUP.
    row = tl.program_id(0).to(tl.int64)
    k = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = k < K
    byte = tl.load(qw_ptr + row * stride_qw + k // 2, mask=mask, other=0).to(tl.int32)
    nib = (byte >> ((k % 2) * 4)) & 0xF
    g = k // GROUP
    s = tl.load(s_ptr + row * stride_s + g, mask=mask, other=0.0).to(tl.float32)
    z = tl.load(z_ptr + row * stride_z + g, mask=mask, other=0).to(tl.int32)
    # the integer difference first (exact), then one float32 product, then one rounding
    w = (nib - z).to(tl.float32) * s
    if RNE_BF16:
        w = _round_to_bf16_rne(w)
    tl.store(w_ptr + row * stride_w + k, w.to(w_ptr.dtype.element_ty), mask=mask)


def kernel_function(qweight, scales, zeros):
    qweight = qweight.contiguous()
    scales = scales.contiguous()
    zeros = zeros.contiguous()
    N, half = qweight.shape
    K = 2 * half
    assert K % GROUP == 0, "K must be a multiple of the group size"
    w = torch.empty((N, K), dtype=scales.dtype, device=qweight.device)
    if N == 0 or K == 0:
        return w
    BLOCK = 1024
    _unpack_dequant[(N, triton.cdiv(K, BLOCK))](qweight, scales, zeros, w, K, qweight.stride(0), scales.stride(0),
                                                zeros.stride(0), w.stride(0), GROUP=GROUP, BLOCK=BLOCK,
                                                RNE_BF16=w.device.type == "cpu" and w.dtype == torch.bfloat16, num_warps=4)
    return w
