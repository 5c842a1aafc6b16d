"""W8A8 matmul: int8 activations A [M, K] with per-row float32 scales, int8 weights W [N, K] with
per-output-channel float32 scales; y[m, n] = (float32(sum_k A[m, k] W[n, k]) * a_scale[m]) *
w_scale[n], in float32 or bfloat16 (out_dtype names it).

A tiled GEMM on the integer tensor cores: the int8 x int8 products and their sum are exact in an
int32 accumulator (|acc| <= 16129 K < 2^31 for the task's K), so the only roundings are the
conversion of acc to float32, the two scale products and the final one to the output dtype,
applied once per output in the epilogue. W is read as stored, [N, K] with K contiguous, which is
the K-major B operand the int8 MMA instructions want. Grouped launch order (GROUP_M row blocks per
column block) keeps W's column blocks in L2. 128 x 128 x 128 tiles; one row (decode, M <= 16)
gets a 16-row tile with more programs along N.
"""
import torch
import triton
import triton.language as tl

OUT_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


@triton.jit
def _round_to_bf16_rne(x):
    # float32 -> nearest bfloat16 value (ties to even), still as float32. Only for the Triton
    # interpreter, whose float32 -> bfloat16 cast truncates; on GPUs the cast rounds to nearest.
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _w8a8_kernel(a_ptr, as_ptr, w_ptr, ws_ptr, y_ptr, M, N, K,
                 stride_am, stride_ak, stride_wn, stride_wk, stride_ym, stride_yn,
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
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :].to(tl.int64) * stride_wn  # W^T tile [K, N]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0)
        b = tl.load(w_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0)
        # out_dtype named and the sum taken outside the dot: Triton 3.6's tl.dot(a, b, acc) with an int32
        # accumulator asserts at GPU compile time (triton-lang/triton#10341, #5669).
        acc += tl.dot(a, b, out_dtype=tl.int32)
        a_ptrs += BLOCK_K * stride_ak
        w_ptrs += BLOCK_K * stride_wk

    a_scale = tl.load(as_ptr + offs_m, mask=mask_m, other=0.0).to(tl.float32)
    w_scale = tl.load(ws_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    y = (acc.to(tl.float32) * a_scale[:, None]) * w_scale[None, :]
    if RNE_BF16:
        y = _round_to_bf16_rne(y)
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def kernel_function(a, a_scale, w, w_scale, out_dtype):
    M, K = a.shape
    N, K2 = w.shape
    assert K == K2, "inner dimensions differ"
    assert a.dtype == torch.int8 and w.dtype == torch.int8, "int8 operands expected"
    dtype = OUT_DTYPES[out_dtype]
    y = torch.empty((M, N), dtype=dtype, device=a.device)
    if y.numel() == 0:
        return y
    BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 128, 8, 3
    if M <= 16:
        BLOCK_M, BLOCK_N, warps = 16, 64, 4
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _w8a8_kernel[grid](a, a_scale, w, w_scale, y, M, N, K,
                       a.stride(0), a.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
                       BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
                       RNE_BF16=a.device.type == "cpu" and dtype == torch.bfloat16, num_warps=warps, num_stages=stages)
    return y
