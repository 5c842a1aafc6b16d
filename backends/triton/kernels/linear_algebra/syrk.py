"""BLAS syrk (lower, no transpose), out of place: out = tril(alpha A A^T + beta C) + triu(C, 1) for
A [N, K], C [N, N] (float32 means IEEE float32: no TF32; bfloat16 accumulates in float32).

One kernel over all [BLOCK, BLOCK] tiles of the output, in grouped order (GROUP_M row blocks
share each column block while it is in L2, as in the matmul reference):
  * tiles strictly above the diagonal only copy C (BLAS leaves that triangle untouched): the
    K-long dot products are computed for the lower half of the tiles only, about half the FLOPs
    of A @ A^T;
  * every other tile is an NT GEMM of two row panels of A (both loaded K-contiguous, the second
    transposed in registers), accumulated in float32 by tl.dot; then alpha acc + beta C below
    and on the diagonal, C above it (diagonal tiles are mixed), rounded once.
int64 row offsets (N K = 67M).
"""
import torch
import triton
import triton.language as tl

GROUP_M = 8


@triton.jit
def _syrk_kernel(a_ptr, c_ptr, out_ptr, N, K, alpha, beta,
                 BLOCK: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                 IEEE: tl.constexpr, UPCAST: tl.constexpr):
    pid = tl.program_id(0)
    num_t = tl.cdiv(N, BLOCK)
    num_pid_in_group = GROUP_M * num_t
    first_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_t - first_m, GROUP_M)
    tm = first_m + ((pid % num_pid_in_group) % group_size_m)
    tn = (pid % num_pid_in_group) // group_size_m
    rows = tm * BLOCK + tl.arange(0, BLOCK)
    cols = tn * BLOCK + tl.arange(0, BLOCK)
    mask = (rows < N)[:, None] & (cols < N)[None, :]
    c_offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    c = tl.load(c_ptr + c_offs, mask=mask, other=0.0)
    if tn > tm:
        tl.store(out_ptr + c_offs, c, mask=mask)
    else:
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + rows[:, None].to(tl.int64) * K + offs_k[None, :]
        b_ptrs = a_ptr + cols[:, None].to(tl.int64) * K + offs_k[None, :]
        acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            k_ok = (k0 + offs_k) < K
            a = tl.load(a_ptrs, mask=(rows < N)[:, None] & k_ok[None, :], other=0.0)
            b = tl.load(b_ptrs, mask=(cols < N)[:, None] & k_ok[None, :], other=0.0)
            if UPCAST:
                # Triton interpreter only: its tl.dot mishandles bfloat16 operands; exact fp32 copies.
                acc = tl.dot(a.to(tl.float32), tl.trans(b.to(tl.float32)), acc, input_precision="ieee")
            elif IEEE:
                acc = tl.dot(a, tl.trans(b), acc, input_precision="ieee")  # float32: no TF32
            else:
                acc = tl.dot(a, tl.trans(b), acc)
            a_ptrs += BLOCK_K
            b_ptrs += BLOCK_K
        upd = alpha * acc + beta * c.to(tl.float32)
        res = tl.where(rows[:, None] >= cols[None, :], upd, c.to(tl.float32))
        tl.store(out_ptr + c_offs, res.to(out_ptr.dtype.element_ty), mask=mask)


def kernel_function(a, c, alpha, beta):
    N, K = a.shape
    out = torch.empty_like(c)
    ieee = a.dtype == torch.float32
    block, block_k = (128, 32) if ieee else (128, 64)
    grid = (triton.cdiv(N, block) ** 2,)
    _syrk_kernel[grid](a, c, out, N, K, float(alpha), float(beta), BLOCK=block, BLOCK_K=block_k, GROUP_M=GROUP_M,
                       IEEE=ieee, UPCAST=a.device.type == "cpu" and a.dtype == torch.bfloat16,
                       num_warps=8, num_stages=3)
    return out
