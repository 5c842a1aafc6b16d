"""Batched LU factorization without pivoting, A = L U, of diagonally dominant matrices (LAPACK
getrf's packed output, no row interchanges), judged by backward and forward error.

Output: one matrix [B, n, n] holding U in the upper triangle (diagonal included) and the strict
lower triangle of L (L has a unit diagonal, not stored), as getrf packs them.

Inputs (conditioning built in): off-diagonal entries N(0, 1/n) with a few outliers, diagonal
entries of random sign and magnitude U[1.1, 2] times the larger of the row's and the column's
off-diagonal absolute sums: A is strictly diagonally dominant by rows and by columns, so LU
without pivoting exists, its growth factor is at most 2 (Higham, Thm 9.9) and every pivot is
well away from zero. The float64 factors are unique, so they are the reference.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import nbytes, randint, randn, uniform

# Backward error: L U = A + dA, |dA| <= gamma_n |L||U| (Higham, Thm 9.3); for a matrix
# diagonally dominant by columns || |L||U| || is a small multiple of ||A|| (growth <= 2), so
# r = ||L U - A||_F / (||A||_F n eps) is O(1) at worst; measured below 0.05 for float32 and
# float64 (right-looking, left-looking and blocked orders), while bfloat16 arithmetic or
# inputs give r in the hundreds.
RESIDUAL_THRESHOLD = 10.0
# Forward error of the packed factors against the float64 ones: the LU factors of a diagonally
# dominant matrix are well conditioned (perturbation of order kappa(A) ||dA|| / ||A||, kappa_2
# below ~3 here); measured ||F - F_ref||_F / ||F_ref||_F < 2e-7 for float32, tolerance
# 10 n eps (3.8e-5 at n = 32, 8.0e-5 at n = 67).
FORWARD_FACTOR = 10.0


def _lu_nopivot(a):
    a = a.clone()
    n = a.shape[-1]
    for k in range(n - 1):
        a[:, k + 1:, k] /= a[:, k, k][:, None]
        a[:, k + 1:, k + 1:] -= a[:, k + 1:, k:k + 1] * a[:, k:k + 1, k + 1:]
    return a


def reference(a):
    return _lu_nopivot(a.to(torch.float64)).to(a.dtype)


def check(ctx):
    (a,) = ctx.inputs
    (f,) = ctx.outputs
    n = a.shape[-1]
    eps = torch.finfo(ctx.dtype).eps
    if not bool(torch.isfinite(f).all()):
        return CheckResult(False, f"LU: {int((~torch.isfinite(f)).sum())} non-finite elements")
    F = f.to(torch.float64)
    eye = torch.eye(n, dtype=torch.float64, device=F.device)
    L = F.tril(-1) + eye
    U = F.triu()
    A = a.to(torch.float64)
    res = torch.linalg.matrix_norm(L @ U - A) / (torch.linalg.matrix_norm(A) * n * eps)
    worst_r = float(res.max())
    (f_ref,) = ctx.reference()
    diff = F - f_ref.to(torch.float64)
    fwd = torch.linalg.matrix_norm(diff) / torch.linalg.matrix_norm(f_ref.to(torch.float64))
    worst_fwd = float(fwd.max())
    tol = FORWARD_FACTOR * n * eps
    max_abs = float(diff.abs().max())
    if not worst_r <= RESIDUAL_THRESHOLD:
        return CheckResult(False, f"||L U - A||_F / (||A||_F n eps) = {worst_r:.3g} > {RESIDUAL_THRESHOLD:g} (batch "
                                  f"{int(torch.argmax(res))}); forward error {worst_fwd:.3g}", max_abs, worst_fwd)
    if not worst_fwd <= tol:
        return CheckResult(False, f"packed factors: ||F - F_ref||_F / ||F_ref||_F = {worst_fwd:.3g} > {tol:.3g} (batch "
                                  f"{int(torch.argmax(fwd))}); scaled residual {worst_r:.3g}", max_abs, worst_fwd)
    return CheckResult(True, f"scaled residual {worst_r:.3g}, forward error {worst_fwd:.3g}", max_abs, worst_fwd)


def make_inputs(shape, dtype, gen):
    b, n = shape["batch"], shape["n"]
    a = randn(gen, (b, n, n), torch.float32, scale=n ** -0.5, offset=0.1 * n ** -0.5, outliers=2e-3, outlier_scale=8.0)
    eye = torch.eye(n, dtype=torch.bool, device=gen.device)
    off = a.masked_fill(eye, 0.0).abs()
    dom = torch.maximum(off.sum(-1), off.sum(-2))
    sign = randint(gen, (b, n), 0, 2, torch.float32) * 2.0 - 1.0
    diag = sign * dom * uniform(gen, (b, n), torch.float32, 1.1, 2.0)
    a = a.masked_fill(eye, 0.0) + torch.diag_embed(diag)
    return (a.to(dtype),)


def flops(shape):
    n = shape["n"]
    return float(shape["batch"]) * (2.0 * n ** 3 / 3.0)


def nbytes_moved(shape, dtype):
    b, n = shape["batch"], shape["n"]
    return 2 * nbytes((b, n, n), dtype)


TASK = Task(
    name="lu_nopivot",
    category="linear_algebra",
    description="batched LU factorization without pivoting of diagonally dominant A [B, n, n], packed as getrf does "
                "(U upper with diagonal, unit-lower L below)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 8, "n": 32}, "small"),
        Shape("awkward", {"batch": 5, "n": 67}, "awkward"),
        # 4096 matrices of 128 x 128: 256 MiB read and 256 MiB written in float32.
        Shape("large", {"batch": 4096, "n": 128}, "large"),
    ],
    dtypes=("float32", "float64"),
    contract=Custom(fn=check, description=(
        f"per matrix, in float64, with L = I + strict lower and U = upper of the output: ||L U - A||_F / (||A||_F n eps) <= "
        f"{RESIDUAL_THRESHOLD:g}, and the packed factors within {FORWARD_FACTOR:g} n eps (relative Frobenius) of the "
        f"float64 factors; finite")),
    flops=flops,
    bytes=nbytes_moved,
)
