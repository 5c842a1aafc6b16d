"""BERT's post-LN sublayer output: y = LayerNorm(residual + h @ W^T + b; gamma, beta, eps=1e-12).

The LayerNorm needs whole rows of N = 1024 GEMM outputs, and a [BLOCK_M, 1024] float32
accumulator per program does not fit in registers at any BLOCK_M that keeps the tensor cores
busy, so the fusion is split where the row reduction forces it:
1. _linear_residual_kernel: a tiled GEMM whose epilogue adds the bias and the residual tile to
   the float32 accumulator and stores z = residual + h W^T + b as float32 (unrounded: the
   LayerNorm sees the exact float32 sum even for bfloat16 inputs).
2. _layer_norm_kernel: one program per row reads z once (rows up to MAX_FUSED held in
   registers), takes the mean and the centred variance and writes y in the dtype.
The float32 z is the only intermediate (written once, read once, mostly from L2 right after the
GEMM); the GEMM's own traffic and FLOPs dominate. float32 uses IEEE float32 operands and
products (tl.dot's default would be TF32). W stays in nn.Linear's [N, K] layout (K-contiguous
tiles transposed in registers); tiles are visited in GROUP_M-row groups for L2 reuse of W;
rows past M are clamped to valid rows (never stored).
"""
import torch
import triton
import triton.language as tl

EPS = 1e-12  # BERT's layer_norm_eps
MAX_FUSED = 8192  # rows up to this long are held in registers by the LayerNorm kernel
LOOP_BLOCK = 4096


@triton.jit
def _linear_residual_kernel(h_ptr, w_ptr, b_ptr, r_ptr, z_ptr, M, N, K,
                            stride_hm, stride_hk, stride_wn, stride_wk, stride_rm, stride_rn, stride_zm,
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
    # z = residual + h @ W^T + b in float32 (the LayerNorm's input, kept unrounded).
    h_ptrs = h_ptr + rows[:, None] * stride_hm + offs_k[None, :] * stride_hk
    w_ptrs = w_ptr + cols[:, None] * stride_wn + offs_k[None, :] * stride_wk

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(h_ptrs)
            w = tl.load(w_ptrs)
        else:
            k_ok = offs_k < K - k0
            a = tl.load(h_ptrs, mask=k_ok[None, :], other=0.0)
            w = tl.load(w_ptrs, mask=k_ok[None, :], other=0.0)
        if UPCAST:
            # Triton interpreter only: its tl.dot mishandles bfloat16 operands; exact fp32 copies.
            acc = tl.dot(a.to(tl.float32), tl.trans(w.to(tl.float32)), acc, input_precision="ieee")
        elif IEEE:
            acc = tl.dot(a, tl.trans(w), acc, input_precision="ieee")
        else:
            acc = tl.dot(a, tl.trans(w), acc)
        h_ptrs += BLOCK_K * stride_hk
        w_ptrs += BLOCK_K * stride_wk

    m_ok = offs_m < M
    n_ok = offs_n < N
    bias = tl.load(b_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)
    res = tl.load(r_ptr + offs_m[:, None].to(tl.int64) * stride_rm + offs_n[None, :] * stride_rn,
                  mask=m_ok[:, None] & n_ok[None, :], other=0.0).to(tl.float32)
    z = res + acc + bias[None, :]
    z_ptrs = z_ptr + offs_m[:, None].to(tl.int64) * stride_zm + offs_n[None, :]
    tl.store(z_ptrs, z, mask=m_ok[:, None] & n_ok[None, :])


@triton.jit
def _layer_norm_kernel(z_ptr, w_ptr, b_ptr, y_ptr, N, stride_zm, stride_ym, eps,
                       BLOCK: tl.constexpr, SINGLE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    z_row = z_ptr + row * stride_zm
    y_row = y_ptr + row * stride_ym
    cols = tl.arange(0, BLOCK)
    if SINGLE:
        ok = cols < N
        z = tl.load(z_row + cols, mask=ok, other=0.0)
        mean = tl.sum(z, axis=0) / N
        zc = tl.where(ok, z - mean, 0.0)
        rstd = tl.rsqrt(tl.sum(zc * zc, axis=0) / N + eps)
        w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=ok, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (zc * rstd * w + b).to(y_ptr.dtype.element_ty), mask=ok)
    else:
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, N, BLOCK):
            offs = start + cols
            acc += tl.load(z_row + offs, mask=offs < N, other=0.0)
        mean = tl.sum(acc, axis=0) / N
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, N, BLOCK):
            offs = start + cols
            ok = offs < N
            zc = tl.where(ok, tl.load(z_row + offs, mask=ok, other=0.0) - mean, 0.0)
            acc += zc * zc
        rstd = tl.rsqrt(tl.sum(acc, axis=0) / N + eps)
        for start in range(0, N, BLOCK):
            offs = start + cols
            ok = offs < N
            z = tl.load(z_row + offs, mask=ok, other=0.0)
            w = tl.load(w_ptr + offs, mask=ok, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + offs, mask=ok, other=0.0).to(tl.float32)
            tl.store(y_row + offs, ((z - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=ok)


def kernel_function(h, weight, bias, residual, ln_weight, ln_bias):
    M, K = h.shape
    N = weight.shape[0]
    y = torch.empty((M, N), dtype=h.dtype, device=h.device)
    if y.numel() == 0:
        return y
    z = torch.empty((M, N), dtype=torch.float32, device=h.device)
    if M <= 16:
        # decode-like (a few rows): a narrow M tile and more programs along N
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 16, 64, 64, 4, 4
    elif h.dtype == torch.float32:
        # IEEE float32 runs on the FMA units; 128x128x32 with 8 warps (as the matmul reference)
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 32, 8, 3
    else:
        # bf16 tensor cores: 32 KiB of shared memory a stage
        BLOCK_M, BLOCK_N, BLOCK_K, warps, stages = 128, 128, 64, 8, 3
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _linear_residual_kernel[grid](
        h, weight, bias, residual, z, M, N, K,
        h.stride(0), h.stride(1), weight.stride(0), weight.stride(1), residual.stride(0), residual.stride(1),
        z.stride(0),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8, EVEN_K=K % BLOCK_K == 0,
        IEEE=h.dtype == torch.float32, UPCAST=h.device.type == "cpu" and h.dtype == torch.bfloat16,
        num_warps=warps, num_stages=stages,
    )
    single = triton.next_power_of_2(N) <= MAX_FUSED
    BLOCK = triton.next_power_of_2(N) if single else LOOP_BLOCK
    _layer_norm_kernel[(M,)](z, ln_weight, ln_bias, y, N, z.stride(0), y.stride(0), EPS,
                             BLOCK=BLOCK, SINGLE=single, num_warps=4 if BLOCK <= 1024 else 8)
    return y
