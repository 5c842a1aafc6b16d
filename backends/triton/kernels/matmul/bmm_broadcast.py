"""torch.matmul(x, w) with x [B, M, K] and one shared w [K, N] (broadcast over the batch) -> [B, M, N];
float32 means IEEE float32 products (no TF32).

The batch dimension carries no structure of its own here: every one of the B x M rows of x is
multiplied by the same w. So the kernel runs ONE tiled GEMM over the flattened (B * M) x K rows
instead of B small ones: tiles span batch boundaries, a batch of single rows (M = 1) still fills
128-row tiles, and each column block of w is loaded once per row tile for all batches. Row r of
the flattened problem lives at x[r // M, r % M] (computed per tile row, so any batch and row
strides work) and is written to out[r // M, r % M] of the contiguous output, i.e. flat row r.
Grouped program order (GROUP_M row tiles per column block) keeps w's column blocks in L2.
Float32 uses FMA tiles of 128 x 128 x 32; 16-bit types tensor-core tiles of 128 x 128 x 64 on
most GPUs and 128 x 256 x 64 on Hopper (the wider tile measured faster for the plain bf16 matmul
reference on an H100).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _bmm_shared_kernel(x_ptr, w_ptr, out_ptr, R, M, N, K,
                       stride_xb, stride_xm, stride_xk, stride_wk, stride_wn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(R, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)  # flattened batch * M + m
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_r = rows < R
    mask_n = offs_n < N
    row_off = (rows // M).to(tl.int64) * stride_xb + (rows % M).to(tl.int64) * stride_xm
    x_ptrs = x_ptr + row_off[:, None] + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None].to(tl.int64) * stride_wk + offs_n[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(x_ptrs, mask=mask_r[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
        if UPCAST:
            # Triton interpreter only: its tl.dot multiplies bfloat16 operands as raw uint16 bit
            # patterns; exact float32 copies (bf16 -> fp32 is lossless) give the right products.
            acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
        elif IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")  # float32: no TF32
        else:
            acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    out_ptrs = out_ptr + rows[:, None].to(tl.int64) * N + offs_n[None, :]
    tl.store(out_ptrs, acc.to(out_ptr.dtype.element_ty), mask=mask_r[:, None] & mask_n[None, :])


def kernel_function(x, w):
    B, M, K = x.shape
    K2, N = w.shape
    assert K == K2, "inner dimensions differ"
    out = torch.empty((B, M, N), dtype=x.dtype, device=x.device)
    R = B * M
    if out.numel() == 0:
        return out
    if x.dtype == torch.float32:
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 32, 8, 3
    elif x.is_cuda and torch.version.hip is None and torch.cuda.get_device_capability(x.device)[0] >= 9:
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 256, 64, 8, 3
    else:
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 64, 8, 3
    if R <= 16:
        BLOCK_M, BLOCK_N, warps = 16, 64, 4  # a few rows in all: narrow M tiles, more programs along N
    grid = (triton.cdiv(R, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _bmm_shared_kernel[grid](
        x, w, out, R, M, N, K,
        x.stride(0), x.stride(1), x.stride(2), w.stride(0), w.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        IEEE=x.dtype == torch.float32, UPCAST=x.device.type == "cpu" and x.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    return out
