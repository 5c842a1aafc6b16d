"""C = A^T @ B with A [K, M] and B [K, N] both stored K-major (token-major): the weight-gradient
pattern dW = X^T dY; float32 means IEEE float32 products (no TF32).

No transpose is materialised: the [BLOCK_M, BLOCK_K] tile of A^T is loaded from A's own layout
by swapping the strides (element (m, k) of A^T is A[k, m], contiguous along m), and the B tile
[BLOCK_K, BLOCK_N] is read as stored; tl.dot accepts either operand major-ness (Triton keeps the
M-contiguous A^T tile in shared memory and the tensor-core instructions read it transposed).
Loads stay coalesced because both tiles are contiguous along their M or N axis. Everything else
is the grouped-order tiled GEMM with a float32 accumulator: FMA tiles of 128 x 128 x 32 for
float32, tensor-core tiles of 128 x 256 x 64 (Hopper) or 128 x 128 x 64 for 16-bit types.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _matmul_tn_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                      stride_ak, stride_am, stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr):
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
    # tile of A^T: rows m, columns k, element A[k, m]
    a_ptrs = a_ptr + offs_k[None, :].to(tl.int64) * stride_ak + offs_m[:, None] * stride_am
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * stride_bk + offs_n[None, :] * stride_bn
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


def kernel_function(x, dy):
    K, M = x.shape
    K2, N = dy.shape
    assert K == K2, "the reduction (token) dims differ"
    c = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if c.numel() == 0:
        return c
    if x.dtype == torch.float32:
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 32, 8, 3
    elif x.is_cuda and torch.version.hip is None and torch.cuda.get_device_capability(x.device)[0] >= 9:
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 256, 64, 8, 3
    else:
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 64, 8, 3
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _matmul_tn_kernel[grid](
        x, dy, c, M, N, K,
        x.stride(0), x.stride(1), dy.stride(0), dy.stride(1), c.stride(0), c.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        IEEE=x.dtype == torch.float32, UPCAST=x.device.type == "cpu" and x.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    return c
