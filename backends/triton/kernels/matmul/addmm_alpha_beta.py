"""torch.addmm: out = beta * C + alpha * (A @ B), A [M, K], B [K, N], C [M, N], alpha and beta Python
floats; float32 means IEEE float32 products (no TF32).

A tiled tl.dot GEMM with the addmm fused into its epilogue: each program accumulates one
[BLOCK_M, BLOCK_N] tile of A @ B in float32 over the K loop, then reads the matching tile of C once
and writes beta * C + alpha * acc, rounded once to the output dtype. Compared with a GEMM followed
by a separate scale-and-add, this saves a write and a read of the M x N product. Programs are
ordered in groups of GROUP_M row-blocks that share each column block of B while it is in L2. Tile
shapes: float32 runs on the FMA units (IEEE products), 128 x 128 x 32; 16-bit types use tensor
cores with 128 x 128 x 64 tiles (the epilogue's extra C tile makes the 128 x 256 tile of the plain
matmul spill); a few rows (M <= 16) get a narrow M tile.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _addmm_kernel(a_ptr, b_ptr, c_ptr, out_ptr, M, N, K, alpha, beta,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, stride_om, stride_on,
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
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
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

    mask = mask_m[:, None] & mask_n[None, :]
    c = tl.load(c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn, mask=mask, other=0.0)
    out = beta * c.to(tl.float32) + alpha * acc
    tl.store(out_ptr + offs_m[:, None].to(tl.int64) * stride_om + offs_n[None, :] * stride_on,
             out.to(out_ptr.dtype.element_ty), mask=mask)


def kernel_function(c, a, b, alpha, beta):
    M, K = a.shape
    K2, N = b.shape
    assert K == K2 and tuple(c.shape) == (M, N), "shapes do not match"
    out = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if out.numel() == 0:
        return out
    if a.dtype == torch.float32:
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 32, 8, 3
    else:
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 64, 8, 3
    if M <= 16:
        BLOCK_M, BLOCK_N, warps = 16, 64, 4  # a few rows: narrow M tiles, more programs along N
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _addmm_kernel[grid](
        a, b, c, out, M, N, K, float(alpha), float(beta),
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), out.stride(0), out.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        IEEE=a.dtype == torch.float32, UPCAST=a.device.type == "cpu" and a.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    return out
