"""Batched thin QR, A = Q R, by Householder reflections (LAPACK geqrf + orgqr): A [B, m, n],
m >= n -> Q [B, m, n] with orthonormal columns, R [B, n, n] upper triangular (strict lower part
exactly 0; the signs of R's diagonal are the usual Householder ones, -sign(x_k)).

Each program holds BB matrices in registers ([BB, M_PAD, N_PAD], in the input's precision; on a
GPU BB = 1 at 128 x 64, the CPU interpreter, whose cost is per Triton op rather than per
element, gets up to 64). Column extraction is a masked reduction (Triton tensors cannot be
indexed).
  * Factor, k = 0 .. n-1: x = A[k:, k], alpha = -sign(x_k) ||x||, v = x - alpha e_k,
    tau = 2 / v^T v (0 for a zero column), A[:, k+1:] -= tau v (v^T A[:, k+1:]); R's column k
    (rows < k as they stand, alpha on the diagonal, zeros below) goes straight to memory, and v
    replaces A's column k (LAPACK's compact storage, with the taus in a register vector).
  * Form Q = H_0 H_1 ... H_{n-1} I[:, :n] backwards, each reflection a rank-1 update of Q.
Householder QR is backward stable and its Q orthogonal to working precision whatever the
conditioning (Higham, Thm 19.4); Gram-Schmidt would lose orthogonality with kappa = 1e4.
"""
import torch
import triton
import triton.language as tl

TILE = 8192  # A elements per program on a GPU: BB x M_PAD x N_PAD (Q takes as many again)
CPU_BB = 64


@triton.jit
def _qr_kernel(a_ptr, q_ptr, r_ptr, B, M, N, BB: tl.constexpr, M_PAD: tl.constexpr, N_PAD: tl.constexpr):
    mat = tl.program_id(0) * BB + tl.arange(0, BB)
    mat_ok = mat < B
    mat64 = mat.to(tl.int64)
    r = tl.arange(0, M_PAD)
    c = tl.arange(0, N_PAD)
    r2 = r[None, :]
    c2 = c[None, :]
    r3 = r[None, :, None]
    c3 = c[None, None, :]
    a_mask = mat_ok[:, None, None] & (r3 < M) & (c3 < N)
    a = tl.load(a_ptr + mat64[:, None, None] * M * N + r3 * N + c3, mask=a_mask, other=0.0)
    taus = tl.zeros((BB, N_PAD), a.dtype)
    for k in range(N):
        col = tl.sum(tl.where(c3 == k, a, 0.0), axis=2)
        x = tl.where(r2 >= k, col, 0.0)
        xk = tl.sum(tl.where(r2 == k, col, 0.0), axis=1)
        norm_x = tl.sqrt(tl.sum(x * x, axis=1))
        alpha = tl.where(xk >= 0.0, -norm_x, norm_x)
        v = x - tl.where(r2 == k, alpha[:, None], 0.0)
        vtv = tl.sum(v * v, axis=1)
        tau = tl.where(vtv > 0.0, 2.0 / vtv, 0.0)
        w = tl.sum(v[:, :, None] * a, axis=1)
        a = a - (tau[:, None] * v)[:, :, None] * tl.where(c2 > k, w, 0.0)[:, None, :]
        r_col = tl.where(r2 < k, col, tl.where(r2 == k, alpha[:, None], 0.0))
        tl.store(r_ptr + mat64[:, None] * N * N + r2 * N + k, r_col, mask=mat_ok[:, None] & (r2 < N))
        a = tl.where(c3 == k, v[:, :, None], a)
        taus = tl.where(c2 == k, tau[:, None], taus)
    q = tl.where(r3 == c3, 1.0, 0.0).to(a.dtype) + tl.zeros((BB, M_PAD, N_PAD), a.dtype)
    for j in range(N):
        k = N - 1 - j
        v = tl.sum(tl.where(c3 == k, a, 0.0), axis=2)
        tau = tl.sum(tl.where(c2 == k, taus, 0.0), axis=1)
        wq = tl.sum(v[:, :, None] * q, axis=1)
        q = q - (tau[:, None] * v)[:, :, None] * wq[:, None, :]
    tl.store(q_ptr + mat64[:, None, None] * M * N + r3 * N + c3, q, mask=a_mask)


def kernel_function(a):
    B, M, N = a.shape
    q = torch.empty((B, M, N), dtype=a.dtype, device=a.device)
    r = torch.empty((B, N, N), dtype=a.dtype, device=a.device)
    m_pad = max(16, triton.next_power_of_2(M))
    n_pad = max(16, triton.next_power_of_2(N))
    bb = min(CPU_BB, triton.next_power_of_2(B)) if a.device.type == "cpu" else max(1, TILE // (m_pad * n_pad))
    elems = bb * m_pad * n_pad
    _qr_kernel[(triton.cdiv(B, bb),)](a, q, r, B, M, N, BB=bb, M_PAD=m_pad, N_PAD=n_pad,
                                      num_warps=16 if elems >= 8192 else (8 if elems >= 2048 else 4))
    return q, r
