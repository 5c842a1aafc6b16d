"""FP8 (E4M3) GEMM with row-wise scales, the GEMM of FP8 inference: y[m, n] = (sum_k a[m, k] b[n, k])
* a_scale[m] * b_scale[n], a [M, K] and b [N, K] given as uint8 E4M3 bit patterns, float32 scales,
bfloat16 output; the contract bounds the error by one bfloat16 rounding, the float32 scalings and
the worst case of a float32 (not lower-precision) sum over K.

Operands are read through float8_e4m3fn views of the uint8 tensors (reinterpretations, no copies)
and widened in registers to float16 (exact: every E4M3 value is a float16), then multiplied on the
float16 tensor cores with a float32 accumulator. Why not the FP8 tensor cores: on Hopper, FP8 MMA
instructions accumulate with roughly 13-14 significand bits (SageAttention2; DeepSeek-V3 report;
Triton leaves this "imprecise accumulation" on by default for fp8 dots on sm_90), which the
contract's float32 bound does not allow at small K; float16 MMA accumulates in float32, at half the
FP8 peak but well within the bound. b is read as stored, [N, K] with K contiguous: the [K, N] tile
tl.dot needs is b's K-major layout. The scales are applied once per output in the epilogue, in the
reference's order (acc * a_scale) * b_scale, and the result rounded once to bfloat16. Grouped
launch order keeps b's column blocks in L2; 128 x 128 x 64 tiles, a 16-row tile for M <= 16.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _round_to_bf16_rne(x):
    # float32 -> nearest bfloat16 value (ties to even), still as float32. Only for the Triton
    # interpreter, whose float32 -> bfloat16 cast truncates; on GPUs the cast rounds to nearest.
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _fp8_rowwise_kernel(a_ptr, as_ptr, b_ptr, bs_ptr, y_ptr, M, N, K,
                        stride_am, stride_ak, stride_bn, stride_bk, stride_ym, stride_yn,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr, RNE_BF16: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :].to(tl.int64) * stride_bn  # b^T tile [K, N]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0.0).to(tl.float16)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0).to(tl.float16)
        acc = tl.dot(a, b, acc, out_dtype=tl.float32)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    a_scale = tl.load(as_ptr + offs_m, mask=mask_m, other=0.0)
    b_scale = tl.load(bs_ptr + offs_n, mask=mask_n, other=0.0)
    y = (acc * a_scale[:, None]) * b_scale[None, :]
    if RNE_BF16:
        y = _round_to_bf16_rne(y)
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def kernel_function(a, a_scale, b, b_scale):
    M, K = a.shape
    N, K2 = b.shape
    assert K == K2, "inner dimensions differ"
    y = torch.empty((M, N), dtype=torch.bfloat16, device=a.device)
    if y.numel() == 0:
        return y
    a8 = a.view(torch.float8_e4m3fn)
    b8 = b.view(torch.float8_e4m3fn)
    BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 64, 8, 3
    if M <= 16:
        BLOCK_M, BLOCK_N, warps = 16, 64, 4
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _fp8_rowwise_kernel[grid](a8, a_scale, b8, b_scale, y, M, N, K,
                              a8.stride(0), a8.stride(1), b8.stride(0), b8.stride(1), y.stride(0), y.stride(1),
                              BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                              RNE_BF16=a.device.type == "cpu", num_warps=warps, num_stages=stages)
    return y
