"""Determinants of a batch of matrices A [B, n, n] (as by LU with partial pivoting: the product
of U's diagonal times the sign of the row permutation), judged by condition-scaled relative
error.

Inputs: off-diagonal entries N(0, 0.25 / n), diagonal entries of random sign and magnitude
U[1, 2], then the rows shuffled by a random permutation (so elimination must pivot and the
permutation's sign matters): the determinants have both signs and magnitudes around
e^(0.39 n) (up to ~1e24 at n = 128, inside float32's range), and kappa_F(A) (at least n by
definition) is measured below 1.4 n.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import randint, randn, uniform

# Derivation: LU with partial pivoting is backward stable, (A + dA) = L U with |dA| <= gamma_n |L||U|,
# so ||dA||_F <= n u rho ||A||_F with rho a small growth factor (<= 2 for these near diagonally
# dominant inputs; Higham, Thm 9.3), and det(A + dA) = det(A) (1 + tr(A^-1 dA) + ...), so
# |det - det_ref| / |det_ref| <= ||A^-1||_F ||dA||_F <= rho n u kappa_F(A) = (rho / 2) n eps kappa_F
# (first order); the n roundings of the product of the pivots add n u, less than that. The
# tolerance is FACTOR * n * eps * kappa_F(A) with FACTOR = 2 (twice that worst case), kappa_F =
# ||A||_F ||A^-1||_F computed per matrix in float64. Measured float32 errors: below 0.03 of
# n eps kappa_F (n = 16, 33, 128); bfloat16 inputs: 18 (n = 128) to 540 (n = 16); a wrong
# permutation sign is a relative error of 2.
FACTOR = 2.0


def reference(a):
    return torch.linalg.det(a)


def check(ctx):
    (a,) = ctx.inputs
    (d,) = ctx.outputs
    n = a.shape[-1]
    eps = torch.finfo(ctx.dtype).eps
    if not bool(torch.isfinite(d).all()):
        return CheckResult(False, f"det: {int((~torch.isfinite(d)).sum())} non-finite values")
    A = a.to(torch.float64)
    (d_ref,) = ctx.reference()
    d_ref = d_ref.to(torch.float64)
    kappa = torch.linalg.matrix_norm(A) * torch.linalg.matrix_norm(torch.linalg.inv(A))
    rel = (d.to(torch.float64) - d_ref).abs() / d_ref.abs()
    ratio = rel / (kappa * n * eps)
    worst = float(ratio.max())
    if not worst <= FACTOR:
        i = int(torch.argmax(ratio))
        return CheckResult(False, f"det: relative error {float(rel[i]):.3g} > {FACTOR:g} n eps kappa_F = "
                                  f"{FACTOR * n * eps * float(kappa[i]):.3g} (matrix {i}: got {float(d[i]):.7g}, expected "
                                  f"{float(d_ref[i]):.7g})", float((d.to(torch.float64) - d_ref).abs().max()), float(rel.max()))
    return CheckResult(True, f"worst error {worst:.3g} n eps kappa_F", float((d.to(torch.float64) - d_ref).abs().max()),
                       float(rel.max()))


def make_inputs(shape, dtype, gen):
    b, n = shape["batch"], shape["n"]
    a = randn(gen, (b, n, n), torch.float32, scale=0.5 * n ** -0.5, offset=0.05 * n ** -0.5)
    sign = randint(gen, (b, n), 0, 2, torch.float32) * 2.0 - 1.0
    diag = uniform(gen, (b, n), torch.float32, 1.0, 2.0) * sign
    eye = torch.eye(n, dtype=torch.bool, device=gen.device)
    a = a.masked_fill(eye, 0.0) + torch.diag_embed(diag)
    # rows shuffled by a random permutation per matrix: pivoting is needed (the dominant entries
    # leave the diagonal) and the sign of the permutation matters
    perm = torch.argsort(uniform(gen, (b, n), torch.float32, 0.0, 1.0), dim=1)
    a = a.gather(1, perm[:, :, None].expand(b, n, n))
    return (a.to(dtype),)


def flops(shape):
    n = shape["n"]
    return float(shape["batch"]) * (2.0 * n ** 3 / 3.0 + n)


def nbytes_moved(shape, dtype):
    b, n = shape["batch"], shape["n"]
    return float((b * n * n + b) * torch.empty((), dtype=dtype).element_size())


TASK = Task(
    name="det_batched",
    category="linear_algebra",
    description="determinant of each matrix of A [B, n, n] (signed, as LU with partial pivoting gives it), judged by "
                "relative error scaled by n eps kappa_F(A)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 256, "n": 16}, "small"),
        Shape("awkward", {"batch": 37, "n": 33}, "awkward"),
        # 8192 matrices of 128 x 128: 512 MiB of float32 read.
        Shape("large", {"batch": 8192, "n": 128}, "large"),
    ],
    dtypes=("float32", "float64"),
    contract=Custom(fn=check, description=(
        f"per matrix, in float64: det finite and |det - det_ref| / |det_ref| <= {FACTOR:g} n eps kappa_F(A), kappa_F = "
        f"||A||_F ||A^-1||_F, against the float64 determinant")),
    flops=flops,
    bytes=nbytes_moved,
)
