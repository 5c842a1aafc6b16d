"""Dominant eigenpair of each symmetric A [B, n, n] by power iteration: lam [B] (signed, largest
in magnitude) and a unit eigenvector v [B, n].

One program per matrix, which holds A in registers ([N_PAD, N_PAD] float32, 64 KB at n = 128,
spread over 8 warps) for all ITERS steps, so A is read from DRAM exactly once:
  * v <- A v / ||A v||, starting from a fixed vector with no special structure (1 + i / n);
  * ITERS = 64: the stated gap |lambda_j| <= |lambda_1| / 2 shrinks the error by 2 per step, so
    64 steps reach float32 precision even when the start vector's component along v_1 is as
    small as 1e-8 (about 25 steps are needed for a typical start);
  * lam = v^T A v (the Rayleigh quotient, with the sign; its error is the square of v's).
A negative lambda_1 makes v alternate in sign from step to step, which the contract allows (v's
sign is free). Padding rows and columns are zero and never enter v. Float32 throughout.
"""
import torch
import triton
import triton.language as tl

ITERS = 64


@triton.jit
def _power_iteration_kernel(a_ptr, lam_ptr, v_ptr, n, N_PAD: tl.constexpr, ITERS: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    i = tl.arange(0, N_PAD)
    ok = i < n
    a = tl.load(a_ptr + b * n * n + i[:, None] * n + i[None, :], mask=ok[:, None] & ok[None, :], other=0.0).to(tl.float32)
    v = tl.where(ok, 1.0 + i.to(tl.float32) / n, 0.0)
    v = v / tl.sqrt(tl.sum(v * v, axis=0))
    for _ in range(ITERS):
        w = tl.sum(a * v[None, :], axis=1)
        v = w / tl.sqrt(tl.sum(w * w, axis=0))
    lam = tl.sum(v * tl.sum(a * v[None, :], axis=1), axis=0)
    tl.store(lam_ptr + b, lam.to(lam_ptr.dtype.element_ty))
    tl.store(v_ptr + b * n + i, v.to(v_ptr.dtype.element_ty), mask=ok)


def kernel_function(a):
    B, n, _ = a.shape
    lam = torch.empty((B,), dtype=a.dtype, device=a.device)
    v = torch.empty((B, n), dtype=a.dtype, device=a.device)
    n_pad = max(16, triton.next_power_of_2(n))
    _power_iteration_kernel[(B,)](a, lam, v, n, N_PAD=n_pad, ITERS=ITERS, num_warps=8 if n_pad >= 128 else 4)
    return lam, v
