"""Batched Cholesky factorization A = L L^T (LAPACK potrf, lower) of SPD matrices [B, n, n],
reading only the lower triangle of A (the strict upper triangle holds garbage).

Each program holds BB matrices in registers ([BB, N_PAD, N_PAD], in the input's precision:
float32 or float64; on a GPU BB = 1 at n = 128 and 4 at n = 32, the CPU interpreter, whose cost
is per Triton op rather than per element, gets up to 64). The load mirrors the lower triangle
into a full symmetric matrix (entry (i, j) is read from (max(i, j), min(i, j)), so the garbage is
never touched). Right-looking: step k takes column k (a masked reduction), d = sqrt(A[k, k]),
l = A[k+1:, k] / d, subtracts l l^T from the trailing block and writes d and l into column k.
Later steps only touch rows and columns > k, so column k is final; the output keeps the lower
triangle and writes exact zeros above it. n steps of O(n^2) register work per matrix. 16 warps
at n = 128 keep the float64 matrix (128 KB) in registers.
"""
import torch
import triton
import triton.language as tl

TILE = 4096  # matrix elements per program on a GPU: BB x N_PAD x N_PAD (registers)
CPU_BB = 64


@triton.jit
def _cholesky_kernel(a_ptr, l_ptr, B, n, BB: tl.constexpr, N_PAD: tl.constexpr):
    m = tl.program_id(0) * BB + tl.arange(0, BB)
    r = tl.arange(0, N_PAD)
    r3 = r[None, :, None]
    c3 = r[None, None, :]
    base = m[:, None, None].to(tl.int64) * n * n
    mask = (m < B)[:, None, None] & (r3 < n) & (c3 < n)
    a = tl.load(a_ptr + base + tl.maximum(r3, c3) * n + tl.minimum(r3, c3), mask=mask, other=0.0)
    a = tl.where((m < B)[:, None, None], a, tl.where(r3 == c3, 1.0, 0.0))  # padding matrices: identity
    for k in range(n):
        col = tl.sum(tl.where(c3 == k, a, 0.0), axis=2)
        d = tl.sqrt(tl.sum(tl.where(r[None, :] == k, col, 0.0), axis=1))
        l = tl.where(r[None, :] > k, col / d[:, None], 0.0)
        a = a - l[:, :, None] * l[:, None, :]
        a = tl.where(c3 == k, tl.where(r[None, :] == k, d[:, None], l)[:, :, None], a)
    out = tl.where(r3 >= c3, a, 0.0)
    tl.store(l_ptr + base + r3 * n + c3, out, mask=mask)


def kernel_function(a):
    B, n, _ = a.shape
    L = torch.empty_like(a)
    n_pad = max(16, triton.next_power_of_2(n))
    bb = min(CPU_BB, triton.next_power_of_2(B)) if a.device.type == "cpu" else max(1, TILE // (n_pad * n_pad))
    elems = bb * n_pad * n_pad
    _cholesky_kernel[(triton.cdiv(B, bb),)](a, L, B, n, BB=bb, N_PAD=n_pad,
                                            num_warps=16 if elems >= 16384 else (8 if elems >= 4096 else 4))
    return L
