"""Batched thin QR factorization A = Q R (as by Householder reflections, LAPACK geqrf + orgqr),
judged by properties, not by comparison with a particular factorization.

Inputs: A [B, m, n], m >= n. Outputs: Q [B, m, n] with orthonormal columns and R [B, n, n] upper
triangular (strict lower triangle exactly 0). The signs of R's diagonal are free (Q R is unique
only up to them), so the contract checks what defines a QR factorization:
  * reconstruction: ||Q R - A||_F / (||A||_F m eps) <= 10
  * orthogonality:  ||Q^T Q - I||_F / (m eps) <= 10
Householder QR is backward stable with an orthogonal Q to working precision whatever the
conditioning (Higham, Thm 19.4: errors of order m n u worst case; measured in these units:
reconstruction < 0.06, orthogonality < 0.3, in float32 and float64).
The inputs are ill-conditioned on purpose: A = Q1 diag(sigma) Q2^T with random orthogonal Q1, Q2
and singular values spaced geometrically from 1 to 1e-4 (kappa_2 = 1e4). Gram-Schmidt loses
orthogonality in proportion to kappa (modified: ~1e4 eps) or kappa^2 (classical, CholeskyQR), so
those fail; computing in bfloat16 fails both bounds by two orders of magnitude.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import nbytes, randn

RECON_THRESHOLD = 10.0
ORTHO_THRESHOLD = 10.0
LOG10_KAPPA = 4.0


def reference(a):
    q, r = torch.linalg.qr(a, mode="reduced")
    return q.contiguous(), r.contiguous()


def check(ctx):
    (a,) = ctx.inputs
    q, r = ctx.outputs
    m, n = a.shape[-2:]
    eps = torch.finfo(ctx.dtype).eps
    for name, t in (("Q", q), ("R", r)):
        if not bool(torch.isfinite(t).all()):
            return CheckResult(False, f"{name}: {int((~torch.isfinite(t)).sum())} non-finite elements")
    low = r.tril(-1)
    if bool((low != 0).any()):
        return CheckResult(False, f"R: {int((low != 0).sum())} nonzero elements below the diagonal")
    Q, R, A = q.to(torch.float64), r.to(torch.float64), a.to(torch.float64)
    recon = torch.linalg.matrix_norm(Q @ R - A) / (torch.linalg.matrix_norm(A) * m * eps)
    eye = torch.eye(n, dtype=torch.float64, device=Q.device)
    ortho = torch.linalg.matrix_norm(Q.mT @ Q - eye) / (m * eps)
    worst_recon, worst_ortho = float(recon.max()), float(ortho.max())
    if not worst_recon <= RECON_THRESHOLD:
        return CheckResult(False, f"||QR - A||_F / (||A||_F m eps) = {worst_recon:.3g} > {RECON_THRESHOLD:g} (batch "
                                  f"{int(torch.argmax(recon))}); orthogonality {worst_ortho:.3g}", None, None)
    if not worst_ortho <= ORTHO_THRESHOLD:
        return CheckResult(False, f"||Q^T Q - I||_F / (m eps) = {worst_ortho:.3g} > {ORTHO_THRESHOLD:g} (batch "
                                  f"{int(torch.argmax(ortho))}); reconstruction {worst_recon:.3g}", None, None)
    return CheckResult(True, f"reconstruction {worst_recon:.3g}, orthogonality {worst_ortho:.3g}", 0.0, 0.0)


def make_inputs(shape, dtype, gen):
    b, m, n = shape["batch"], shape["m"], shape["n"]
    q1, _ = torch.linalg.qr(randn(gen, (b, m, n), torch.float64))
    q2, _ = torch.linalg.qr(randn(gen, (b, n, n), torch.float64))
    expo = torch.linspace(0.0, -LOG10_KAPPA, n, dtype=torch.float64, device=gen.device) if n > 1 else \
        torch.zeros(1, dtype=torch.float64, device=gen.device)
    a = (q1 * torch.pow(10.0, expo)) @ q2.mT
    return (a.to(dtype),)


def flops(shape):
    # Householder QR 2mn^2 - 2n^3/3, forming the thin Q as much again
    m, n = shape["m"], shape["n"]
    return float(shape["batch"]) * 2.0 * (2.0 * m * n * n - 2.0 * n ** 3 / 3.0)


def nbytes_moved(shape, dtype):
    b, m, n = shape["batch"], shape["m"], shape["n"]
    return 2 * nbytes((b, m, n), dtype) + nbytes((b, n * (n + 1) // 2), dtype)


TASK = Task(
    name="qr_householder",
    category="linear_algebra",
    description="batched thin QR A = Q R of ill-conditioned A [B, m, n] (kappa 1e4): Q [B, m, n] orthonormal columns, "
                "R [B, n, n] upper triangular; judged by reconstruction and orthogonality",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 16, "m": 64, "n": 32}, "small"),
        Shape("awkward", {"batch": 3, "m": 67, "n": 35}, "awkward"),
        # 8192 tall-skinny 128 x 64 blocks (a TSQR panel): A and Q 256 MiB each in float32, plus R.
        Shape("large", {"batch": 8192, "m": 128, "n": 64}, "large"),
    ],
    dtypes=("float32", "float64"),
    contract=Custom(fn=check, description=(
        f"per matrix, in float64: Q, R finite; R strictly lower part exactly 0; ||QR - A||_F / (||A||_F m eps) <= "
        f"{RECON_THRESHOLD:g}; ||Q^T Q - I||_F / (m eps) <= {ORTHO_THRESHOLD:g} (signs of R's diagonal free)")),
    flops=flops,
    bytes=nbytes_moved,
)
