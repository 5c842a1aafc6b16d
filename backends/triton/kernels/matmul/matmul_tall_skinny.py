"""Tall-skinny C = A @ B, A [M, K] with M >> K, B [K, N] small (a block of vectors projected onto
a basis); float32 means IEEE float32 products (no TF32).

Bound by reading A once (537 MB in float32 at the task's large shape; B is 16 KB and C a quarter
of A). So the tiles are shaped for streaming A, not for GEMM reuse: one program per BLOCK_M rows
of A, with a BLOCK_N that covers all of N (up to 128 columns; wider B gets more column blocks) so
every A tile is read from DRAM exactly once, and K consumed in BLOCK_K steps through a pipelined
loop so several A tiles are in flight per program. B is re-read by every program but stays in
L2. N and K below 16 are padded to the minimum tl.dot tile with masks. Products accumulate in
float32 (FMA for float32, tensor cores for 16-bit types) and are rounded once.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _tall_skinny_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                        stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        IEEE: tl.constexpr, UPCAST: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
        if UPCAST:
            # Triton interpreter only: its tl.dot multiplies bfloat16 operands as raw uint16 bit
            # patterns; exact float32 copies (bf16 -> fp32 is lossless) give the right products.
            acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
        elif IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")  # float32: no TF32
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def kernel_function(a, b):
    M, K = a.shape
    K2, N = b.shape
    assert K == K2, "inner dimensions differ"
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if c.numel() == 0:
        return c
    BLOCK_N = min(max(16, triton.next_power_of_2(N)), 128)
    BLOCK_K = min(max(16, triton.next_power_of_2(K)), 32 if a.dtype == torch.float32 else 64)
    BLOCK_M = 128
    assert triton.cdiv(N, BLOCK_N) <= 65535, "column blocks run on grid axis 1"
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    _tall_skinny_kernel[grid](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        IEEE=a.dtype == torch.float32, UPCAST=a.device.type == "cpu" and a.dtype == torch.bfloat16,
        num_warps=4, num_stages=4,
    )
    return c
