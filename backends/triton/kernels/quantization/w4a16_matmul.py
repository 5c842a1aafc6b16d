"""W4A16 matmul (AWQ / GPTQ-style weight-only int4): y = x @ w^T with x [M, K] float16/bfloat16 and
w[n, k] = (q[n, k] - zeros[n, k // 128]) * scales[n, k // 128], q unsigned 4-bit codes packed two per
byte in qweight [N, K/2] (q[n, 2i] in the low nibble); float32 accumulation.

A tiled GEMM whose K step is exactly one quantization group (BLOCK_K = 128), so every K step has
one scale and one zero point per output column. Per step the program loads the [BLOCK_N, 64]
packed bytes (contiguous along K), splits the nibbles and interleaves them back into K order
([BLOCK_N, 128], in registers), subtracts the zero point, and multiplies the x tile by these
integer weights (-15..15, exact in float16 and bfloat16) on the tensor cores; the float32 group
product is then scaled per column by the group's scale and added to the float32 accumulator. So
the weights are never rounded (scaling the integer partial sums is exact up to float32 rounding,
where dequantizing first would round every weight to 16 bits), and the packed weights are read
at 4 bits per value. Grouped launch order keeps a column block of weights in L2 across row blocks;
128 x 64 x 128 tiles, a 16-row tile for M <= 16 (decode).
"""
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
def _w4a16_kernel(x_ptr, qw_ptr, s_ptr, z_ptr, y_ptr, M, N, K,
                  stride_xm, stride_xk, stride_qn, stride_qk, stride_sn, stride_sg, stride_zn, stride_zg,
                  stride_ym, stride_yn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP: tl.constexpr, GROUP_M: tl.constexpr,
                  UPCAST: tl.constexpr, RNE_BF16: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    HALF: tl.constexpr = GROUP // 2
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, GROUP)
    offs_b = tl.arange(0, HALF)
    mask_m = offs_m < M
    mask_n = offs_n < N
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :] * stride_xk
    q_ptrs = qw_ptr + offs_n[:, None].to(tl.int64) * stride_qn + offs_b[None, :] * stride_qk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for g in range(0, K // GROUP):
        x = tl.load(x_ptrs, mask=mask_m[:, None], other=0.0)
        packed = tl.load(q_ptrs, mask=mask_n[:, None], other=0)
        q = tl.interleave(packed & 0xF, packed >> 4)  # [BLOCK_N, GROUP] uint8: k = 2i low nibble, 2i + 1 high
        zero = tl.load(z_ptr + offs_n * stride_zn + g * stride_zg, mask=mask_n, other=0)
        scale = tl.load(s_ptr + offs_n * stride_sn + g * stride_sg, mask=mask_n, other=0.0).to(tl.float32)
        if UPCAST:
            # Triton interpreter only: its tl.dot and its int -> bfloat16 cast mishandle bfloat16;
            # exact float32 copies give the same products.
            wq = q.to(tl.float32) - zero.to(tl.float32)[:, None]
            part = tl.dot(x.to(tl.float32), tl.trans(wq), input_precision="ieee")
        else:
            # codes and zero points 0..15, their difference -15..15: all exact in 16-bit floats
            wq = q.to(x.dtype) - zero.to(x.dtype)[:, None]
            part = tl.dot(x, tl.trans(wq), out_dtype=tl.float32)
        acc += part * scale[None, :]
        x_ptrs += GROUP * stride_xk
        q_ptrs += HALF * stride_qk

    if RNE_BF16:
        acc = _round_to_bf16_rne(acc)
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def kernel_function(x, qweight, scales, zeros):
    M, K = x.shape
    N, half = qweight.shape
    assert K % GROUP == 0 and half * 2 == K, f"K must be a multiple of {GROUP} and match qweight"
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    # 128 x 64: with the unpacked weight tile and a second float32 tile (the group product) live
    # next to the accumulator, 128 x 128 needs more than 255 registers per thread and spills
    BLOCK_M, BLOCK_N, warps, stages = 128, 64, 8, 3
    if M <= 16:
        BLOCK_M, BLOCK_N, warps = 16, 64, 4
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    on_cpu_bf16 = x.device.type == "cpu" and x.dtype == torch.bfloat16
    _w4a16_kernel[grid](x, qweight, scales, zeros, y, M, N, K,
                        x.stride(0), x.stride(1), qweight.stride(0), qweight.stride(1), scales.stride(0), scales.stride(1),
                        zeros.stride(0), zeros.stride(1), y.stride(0), y.stride(1),
                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, GROUP=GROUP, GROUP_M=8,
                        UPCAST=on_cpu_bf16, RNE_BF16=on_cpu_bf16, num_warps=warps, num_stages=stages)
    return y
