"""DiT adaLN-Zero sublayer: y = x + gate[b] * Linear(LayerNorm(x) * (1 + scale[b]) + shift[b]).

Two kernels. _row_stats_kernel reads x once and writes each token's mean and rstd. The GEMM
(M = B * T tokens, K = N = D) builds its operand while loading x: a = (x - mean) * rstd *
(1 + scale[b]) + shift[b] in float32, where b = token // T picks the sample's modulation row
(loaded per row, so a tile may straddle two samples), and feeds it straight to the MMA; the
epilogue adds the bias, multiplies by the sample's gate and adds the residual x tile, so neither
the modulated activations nor the linear output ever reach global memory. For bfloat16 the
operand is rounded to bfloat16 for the tensor cores, as the model's modulated LayerNorm output
would be; float32 keeps IEEE float32 operands and products (tl.dot's default would be TF32).
The weight stays in nn.Linear's [N, K] layout (K-contiguous tiles transposed in registers);
tiles are visited in GROUP_M-row groups for L2 reuse of W; rows past M are clamped (never stored).
"""
import torch
import triton
import triton.language as tl

EPS = 1e-6  # DiT's LayerNorm eps (no affine parameters)
MAX_FUSED = 8192  # rows up to this long are held in registers by the statistics kernel
LOOP_BLOCK = 4096


@triton.jit
def _row_stats_kernel(x_ptr, mean_ptr, rstd_ptr, K, stride_xm, stride_xk, eps,
                      BLOCK: tl.constexpr, SINGLE: tl.constexpr):
    # One program per row: mean and 1/sqrt(var + eps) in float32, the variance of the centred
    # values (two passes over the row, the second from registers or L1), never E[x^2] - E[x]^2.
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    cols = tl.arange(0, BLOCK)
    if SINGLE:
        ok = cols < K
        x = tl.load(x_row + cols * stride_xk, mask=ok, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / K
        xc = tl.where(ok, x - mean, 0.0)
        var = tl.sum(xc * xc, axis=0) / K
    else:
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, K, BLOCK):
            offs = start + cols
            acc += tl.load(x_row + offs * stride_xk, mask=offs < K, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / K
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, K, BLOCK):
            offs = start + cols
            ok = offs < K
            xc = tl.where(ok, tl.load(x_row + offs * stride_xk, mask=ok, other=0.0).to(tl.float32) - mean, 0.0)
            acc += xc * xc
        var = tl.sum(acc, axis=0) / K
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, tl.rsqrt(var + eps))


@triton.jit
def _adaln_modulate_gate_kernel(x_ptr, mean_ptr, rstd_ptr, shift_ptr, scale_ptr, gate_ptr, w_ptr, b_ptr, y_ptr,
                                M, N, K, T,
                                stride_xm, stride_xk, stride_mb, stride_md, stride_wn, stride_wk, stride_ym, stride_yn,
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
    w_ptrs = w_ptr + cols[:, None] * stride_wn + offs_k[None, :] * stride_wk
    mod_rows = (rows // T)[:, None] * stride_mb  # the sample of each token: its shift/scale/gate row
    mean = tl.load(mean_ptr + rows)[:, None]
    rstd = tl.load(rstd_ptr + rows)[:, None]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        if EVEN_K:
            x = tl.load(x_ptrs).to(tl.float32)
            mod_offs = mod_rows + (k0 + offs_k)[None, :] * stride_md
            scale = tl.load(scale_ptr + mod_offs).to(tl.float32)
            shift = tl.load(shift_ptr + mod_offs).to(tl.float32)
            w = tl.load(w_ptrs)
        else:
            k_ok = offs_k < K - k0
            x = tl.load(x_ptrs, mask=k_ok[None, :], other=0.0).to(tl.float32)
            mod_offs = mod_rows + (k0 + offs_k)[None, :] * stride_md
            scale = tl.load(scale_ptr + mod_offs, mask=k_ok[None, :], other=0.0).to(tl.float32)
            shift = tl.load(shift_ptr + mod_offs, mask=k_ok[None, :], other=0.0).to(tl.float32)
            w = tl.load(w_ptrs, mask=k_ok[None, :], other=0.0)
        a = (x - mean) * rstd * (1.0 + scale) + shift  # masked k: finite, and w = 0 there
        if UPCAST:
            # Triton interpreter only: its tl.dot mishandles bfloat16 operands; exact fp32 copies.
            acc = tl.dot(a, tl.trans(w.to(tl.float32)), acc, input_precision="ieee")
        elif IEEE:
            acc = tl.dot(a, tl.trans(w), acc, input_precision="ieee")
        else:
            acc = tl.dot(a.to(w.dtype), tl.trans(w), acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    m_ok = offs_m < M
    n_ok = offs_n < N
    out_mask = m_ok[:, None] & n_ok[None, :]
    bias = tl.load(b_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)
    gate = tl.load(gate_ptr + mod_rows + offs_n[None, :] * stride_md, mask=out_mask, other=0.0).to(tl.float32)
    res = tl.load(x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_n[None, :] * stride_xk,
                  mask=out_mask, other=0.0).to(tl.float32)
    y = res + gate * (acc + bias[None, :])
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def kernel_function(x, shift, scale, gate, weight, bias):
    B, T, D = x.shape
    N = weight.shape[0]
    assert N == D and shift.stride() == scale.stride() == gate.stride(), "modulation rows must share a layout"
    y = torch.empty((B, T, N), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    x2, y2 = x.view(B * T, D), y.view(B * T, N)  # x: a view, never a copy (it must be contiguous)
    M, K = x2.shape
    mean = torch.empty((M,), dtype=torch.float32, device=x2.device)
    rstd = torch.empty((M,), dtype=torch.float32, device=x2.device)
    single = triton.next_power_of_2(K) <= MAX_FUSED
    BLOCK = triton.next_power_of_2(K) if single else LOOP_BLOCK
    _row_stats_kernel[(M,)](x2, mean, rstd, K, x2.stride(0), x2.stride(1), EPS,
                            BLOCK=BLOCK, SINGLE=single, num_warps=4 if BLOCK <= 1024 else 8)
    if M <= 16:
        # decode-like (a few rows): a narrow M tile and more programs along N
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 16, 64, 64, 4, 4
    elif x.dtype == torch.float32:
        # IEEE float32 runs on the FMA units; 128x128x32 with 8 warps (as the matmul reference)
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 32, 8, 3
    else:
        # bf16 tensor cores; the prologue's operand passes through registers before the MMA
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 64, 8, 3
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _adaln_modulate_gate_kernel[grid](
        x2, mean, rstd, shift, scale, gate, weight, bias, y2, M, N, K, T,
        x2.stride(0), x2.stride(1), shift.stride(0), shift.stride(1), weight.stride(0), weight.stride(1),
        y2.stride(0), y2.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8, EVEN_K=K % BLOCK_K == 0,
        IEEE=x.dtype == torch.float32, UPCAST=x.device.type == "cpu" and x.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    return y
