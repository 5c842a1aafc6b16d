"""Batched Cholesky factorization A = L L^T of symmetric positive definite matrices, judged by
backward and forward error (LAPACK potrf, lower).

Only the lower triangle (diagonal included) of A defines the matrix: the strict upper triangle
holds random garbage that a correct factorization never reads (as LAPACK's uplo='L'), so a
kernel that reads the full matrix fails. The output L must be lower triangular with a positive
diagonal and an exactly zero strict upper triangle.

Conditioning (built into the inputs): A = X X^T / m + 0.5 I with X [n, m] Gaussian, m = 2n. By
Marchenko-Pastur the eigenvalues of X X^T / m fill [(1 - 1/sqrt 2)^2, (1 + 1/sqrt 2)^2] =
[0.086, 2.91], so kappa_2(A) <= 3.41 / 0.586 = 5.8 up to finite-n fluctuations (measured below 6.5
for n = 32 .. 128); the tolerance below takes kappa <= 10.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import nbytes, randn

# Backward error: Cholesky is backward stable (Higham, Accuracy and Stability of Numerical
# Algorithms, Thm 10.3): L L^T = A + dA with |dA| <= gamma_{n+1} |L| |L^T|, and || |L||L^T| ||_F <=
# ||L||_F^2 = trace(A) <= sqrt(n) ||A||_F, so r = ||L L^T - A||_F / (||A||_F n eps) is at most
# about sqrt(n) / 2 in the worst case and measured below 0.05 (float32 and float64, any
# blocking). A threshold of 10 is far above every ordering of the sums, while a factorization
# in bfloat16 gives r in the hundreds (rounding A alone costs 2^-9 ||A||).
RESIDUAL_THRESHOLD = 10.0
# Forward error: to first order ||L - L_ref||_F / ||L||_F <= kappa_2(A) * ||dA||_F / ||A||_2
# (Sun's perturbation bound for the Cholesky factor, up to a small constant); with
# ||dA|| <= n eps ||A|| (above) and kappa <= 10 the tolerance is KAPPA_BOUND * n * eps against the
# float64 factor of the same (rounded) input. Measured float32 errors are below 2e-7.
KAPPA_BOUND = 10.0


def _symmetric_from_lower(a):
    low = a.tril()
    return low + low.tril(-1).mT


def reference(a):
    return torch.linalg.cholesky(_symmetric_from_lower(a)).contiguous()


def check(ctx):
    (a,) = ctx.inputs
    (l,) = ctx.outputs
    n = a.shape[-1]
    eps = torch.finfo(ctx.dtype).eps
    if not bool(torch.isfinite(l).all()):
        return CheckResult(False, f"L: {int((~torch.isfinite(l)).sum())} non-finite elements")
    upper = l.triu(1)
    if bool((upper != 0).any()):
        return CheckResult(False, f"L: {int((upper != 0).sum())} nonzero elements above the diagonal")
    diag = l.diagonal(dim1=-2, dim2=-1)
    if not bool((diag > 0).all()):
        return CheckResult(False, f"L: {int((~(diag > 0)).sum())} diagonal elements are not positive")
    A = _symmetric_from_lower(a.to(torch.float64))
    L = l.to(torch.float64)
    res = torch.linalg.matrix_norm(L @ L.mT - A) / (torch.linalg.matrix_norm(A) * n * eps)
    worst_r = float(res.max())
    (l_ref,) = ctx.reference()
    diff = L - l_ref.to(torch.float64)
    fwd = torch.linalg.matrix_norm(diff) / torch.linalg.matrix_norm(l_ref.to(torch.float64))
    worst_fwd = float(fwd.max())
    fwd_tol = KAPPA_BOUND * n * eps
    max_abs = float(diff.abs().max())
    if not worst_r <= RESIDUAL_THRESHOLD:
        return CheckResult(False, f"||L L^T - A||_F / (||A||_F n eps) = {worst_r:.3g} > {RESIDUAL_THRESHOLD:g} (batch "
                                  f"{int(torch.argmax(res))}); forward error {worst_fwd:.3g}", max_abs, worst_fwd)
    if not worst_fwd <= fwd_tol:
        return CheckResult(False, f"||L - L_ref||_F / ||L_ref||_F = {worst_fwd:.3g} > {fwd_tol:.3g} (batch "
                                  f"{int(torch.argmax(fwd))}); scaled residual {worst_r:.3g}", max_abs, worst_fwd)
    return CheckResult(True, f"scaled residual {worst_r:.3g}, forward error {worst_fwd:.3g}", max_abs, worst_fwd)


def make_inputs(shape, dtype, gen):
    b, n = shape["batch"], shape["n"]
    m = 2 * n
    x = randn(gen, (b, n, m), torch.float64, scale=1.0)
    spd = x @ x.mT / m + 0.5 * torch.eye(n, dtype=torch.float64, device=gen.device)
    garbage = randn(gen, (b, n, n), torch.float64, scale=3.0, offset=1.0)
    upper = torch.ones(n, n, dtype=torch.bool, device=gen.device).triu(1)
    return (torch.where(upper, garbage, spd).to(dtype),)


def flops(shape):
    n = shape["n"]
    return float(shape["batch"]) * (n ** 3 / 3.0 + n ** 2 / 2.0)


def nbytes_moved(shape, dtype):
    # the lower triangle of A read, L (lower triangle) written
    b, n = shape["batch"], shape["n"]
    return 2.0 * nbytes((b, n * (n + 1) // 2), dtype)


TASK = Task(
    name="cholesky",
    category="linear_algebra",
    description="batched Cholesky A = L L^T of SPD matrices [B, n, n]; only the lower triangle of A is read (the upper "
                "holds garbage), L lower triangular with a zero upper triangle",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 8, "n": 32}, "small"),
        Shape("awkward", {"batch": 5, "n": 67}, "awkward"),
        # A is 8192 x 128 x 128 x 4 B = 512 MiB in float32, L as much; the lower triangles alone
        # (the compulsory traffic counted by bytes) are 2 x 258 MiB = 541 MB.
        Shape("large", {"batch": 8192, "n": 128}, "large"),
    ],
    dtypes=("float32", "float64"),
    contract=Custom(fn=check, description=(
        f"per matrix, in float64: L finite, strictly upper part exactly 0, positive diagonal; ||L L^T - A||_F / (||A||_F n "
        f"eps) <= {RESIDUAL_THRESHOLD:g} with A the symmetric matrix of its lower triangle; ||L - L_ref||_F/||L_ref||_F <= "
        f"{KAPPA_BOUND:g} n eps against the float64 factor (inputs built with kappa_2(A) < 10)")),
    flops=flops,
    bytes=nbytes_moved,
)
