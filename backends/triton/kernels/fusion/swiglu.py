import torch
import triton
import triton.language as tl


@triton.jit
def _swiglu_kernel(x_ptr, wg_ptr, wu_ptr, y_ptr, M, N, K,
                   stride_xm, stride_wn, stride_ym,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    # Both projections of one [BLOCK_M, BLOCK_N] output tile in one K loop: each x tile is loaded
    # once for the two GEMMs, and silu(gate) * up is applied to the float32 accumulators, so
    # neither projection is ever written to global memory. W tiles are read K-contiguous
    # ([BLOCK_N, BLOCK_K]) and transposed in registers. Grouped ordering keeps W tiles in L2.
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
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :]
    w_offs = offs_n[:, None].to(tl.int64) * stride_wn + offs_k[None, :]
    wg_ptrs = wg_ptr + w_offs
    wu_ptrs = wu_ptr + w_offs

    acc_g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_u = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        x = tl.load(x_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0.0)
        wg = tl.load(wg_ptrs, mask=mask_n[:, None] & k_ok[None, :], other=0.0)
        wu = tl.load(wu_ptrs, mask=mask_n[:, None] & k_ok[None, :], other=0.0)
        if UPCAST:
            # Triton interpreter only: its tl.dot mishandles bfloat16 operands; exact fp32 copies.
            xf = x.to(tl.float32)
            acc_g = tl.dot(xf, tl.trans(wg.to(tl.float32)), acc_g, input_precision="ieee")
            acc_u = tl.dot(xf, tl.trans(wu.to(tl.float32)), acc_u, input_precision="ieee")
        elif IEEE:
            # float32 operands: true fp32 products (Triton's default would be TF32 on NVIDIA GPUs).
            acc_g = tl.dot(x, tl.trans(wg), acc_g, input_precision="ieee")
            acc_u = tl.dot(x, tl.trans(wu), acc_u, input_precision="ieee")
        else:
            acc_g = tl.dot(x, tl.trans(wg), acc_g)
            acc_u = tl.dot(x, tl.trans(wu), acc_u)
        x_ptrs += BLOCK_K
        wg_ptrs += BLOCK_K
        wu_ptrs += BLOCK_K

    y = acc_g / (1.0 + tl.exp(-acc_g)) * acc_u  # silu(g) * u
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def kernel_function(x, w_gate, w_up):
    x = x.contiguous()
    w_gate = w_gate.contiguous()
    w_up = w_up.contiguous()
    M, K = x.shape
    N, K2 = w_gate.shape
    assert K == K2 and w_up.shape == w_gate.shape, "shapes differ"
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    if M <= 16:
        # decode-like (a few rows): a narrow M tile, more programs along N
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 16, 64, 64, 4, 4
    elif x.dtype == torch.float32:
        # IEEE fp32 runs on the FMA units; two 128x64 accumulators keep register use at one
        # 128x128 GEMM's.
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 64, 32, 8, 3
    else:
        # two 128x128 fp32 accumulators (128 registers a thread at 8 warps); x + two W tiles
        # are 48 KiB of shared memory a stage.
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 64, 8, 3
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _swiglu_kernel[grid](
        x, w_gate, w_up, y, M, N, K, x.stride(0), w_gate.stride(0), y.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        IEEE=x.dtype == torch.float32, UPCAST=x.device.type == "cpu" and x.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    return y
