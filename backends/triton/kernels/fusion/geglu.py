"""GeGLU MLP gate: y = gelu_tanh(x @ Wg^T) * (x @ Wu^T), both projections in one kernel.

Each program owns one [BLOCK_M, BLOCK_N] output tile and runs one K loop for both GEMMs: every x
tile is loaded once and multiplied by the matching Wg and Wu tiles into two float32
accumulators, and the tanh-GELU product is applied to the accumulators, so neither projection
is ever written to global memory (the unfused form writes and re-reads two [M, N] tensors).
W tiles are read K-contiguous ([BLOCK_N, BLOCK_K], nn.Linear's layout) and transposed in
registers; tiles are visited in GROUP_M-row groups so W blocks are reused from L2; rows past M
are clamped to valid rows (never stored) so the K-loop loads need no row masks. tanh is
computed from exp(-2|u|), which cannot overflow. float32 operands use IEEE products (tl.dot's
default would be TF32 on NVIDIA GPUs).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _tanh(z):
    # tanh from exp(-2|z|), which lies in (0, 1] and never overflows; odd symmetry restores the sign.
    e = tl.exp(-2.0 * tl.abs(z))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(z < 0, -t, t)


@triton.jit
def _geglu_kernel(x_ptr, wg_ptr, wu_ptr, y_ptr, M, N, K,
                  stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, EVEN_K: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    rows = (offs_m % M).to(tl.int64)
    cols = (offs_n % N).to(tl.int64)
    x_ptrs = x_ptr + rows[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_offs = cols[:, None] * stride_wn + offs_k[None, :] * stride_wk
    wg_ptrs = wg_ptr + w_offs
    wu_ptrs = wu_ptr + w_offs

    acc_g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_u = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        if EVEN_K:
            x = tl.load(x_ptrs)
            wg = tl.load(wg_ptrs)
            wu = tl.load(wu_ptrs)
        else:
            k_ok = (offs_k < K - k0)[None, :]
            x = tl.load(x_ptrs, mask=k_ok, other=0.0)
            wg = tl.load(wg_ptrs, mask=k_ok, other=0.0)
            wu = tl.load(wu_ptrs, mask=k_ok, other=0.0)
        if UPCAST:
            # Triton interpreter only: its tl.dot mishandles bfloat16 operands; exact fp32 copies.
            xf = x.to(tl.float32)
            acc_g = tl.dot(xf, tl.trans(wg.to(tl.float32)), acc_g, input_precision="ieee")
            acc_u = tl.dot(xf, tl.trans(wu.to(tl.float32)), acc_u, input_precision="ieee")
        elif IEEE:
            acc_g = tl.dot(x, tl.trans(wg), acc_g, input_precision="ieee")
            acc_u = tl.dot(x, tl.trans(wu), acc_u, input_precision="ieee")
        else:
            acc_g = tl.dot(x, tl.trans(wg), acc_g)
            acc_u = tl.dot(x, tl.trans(wu), acc_u)
        x_ptrs += BLOCK_K * stride_xk
        wg_ptrs += BLOCK_K * stride_wk
        wu_ptrs += BLOCK_K * stride_wk

    gelu = 0.5 * acc_g * (1.0 + _tanh(0.7978845608028654 * (acc_g + 0.044715 * acc_g * acc_g * acc_g)))
    y = gelu * acc_u
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=(offs_m < M)[:, None] & (offs_n < N)[None, :])


def kernel_function(x, w_gate, w_up):
    M, K = x.shape
    N = w_gate.shape[0]
    assert w_up.shape == w_gate.shape and w_up.stride() == w_gate.stride(), "Wg and Wu must share a layout"
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
        # two 128x128 fp32 accumulators (128 registers a thread at 8 warps); x + two W tiles are
        # 48 KiB of shared memory a stage.
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 64, 8, 3
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _geglu_kernel[grid](
        x, w_gate, w_up, y, M, N, K,
        x.stride(0), x.stride(1), w_gate.stride(0), w_gate.stride(1), y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8, EVEN_K=K % BLOCK_K == 0,
        IEEE=x.dtype == torch.float32, UPCAST=x.device.type == "cpu" and x.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    return y
