"""Inverses of many small matrices (4x4 .. 8x8, as in graphics, robotics and Kalman filters),
judged by residual and forward error per matrix.

Conditioning (built into the inputs): A = H1 H2 D H3 with H_i random Householder reflections
(orthogonal) and D = diag(+/- 10^U[-1, 1]), so kappa_2(A) = max|d| / min|d| <= 100 exactly (up
to the rounding of A), and every entry of A is generically nonzero.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import nbytes, randint, randn, uniform

# Residual: an inverse computed by LU with partial pivoting (or Gauss-Jordan) satisfies
# |A X - I| <= c_n u |L||U||X| (Higham, Accuracy and Stability, section 14.3) or the same bound for
# X A - I, so min(||A X - I||_F, ||X A - I||_F) / (||A||_F ||X||_F n eps) is O(1) with small growth;
# measured below 0.12 for float32 and float64 (LU-based torch.linalg.inv, n = 4, 5, 8); Gauss-Jordan
# with partial pivoting and the cofactor (adjugate) formula at n = 4, 5 pass as well.
# A threshold of 10 leaves room for any elimination order, while bfloat16 inputs give ~100.
RESIDUAL_THRESHOLD = 10.0
# Forward error: ||X - X_ref||_F / ||X_ref||_F <= kappa_F(A) * (relative backward error) <=
# FORWARD_FACTOR * n * eps * kappa_F(A), kappa_F = ||A||_F ||A^-1||_F computed per matrix in float64
# (first order); measured below 0.06 n eps kappa_F.
FORWARD_FACTOR = 10.0


def reference(a):
    return torch.linalg.inv(a).contiguous()


def check(ctx):
    (a,) = ctx.inputs
    (x,) = ctx.outputs
    n = a.shape[-1]
    eps = torch.finfo(ctx.dtype).eps
    if not bool(torch.isfinite(x).all()):
        return CheckResult(False, f"X: {int((~torch.isfinite(x)).sum())} non-finite elements")
    A, X = a.to(torch.float64), x.to(torch.float64)
    eye = torch.eye(n, dtype=torch.float64, device=A.device)
    norm = torch.linalg.matrix_norm
    res = torch.minimum(norm(A @ X - eye), norm(X @ A - eye)) / (norm(A) * norm(X) * n * eps)
    worst_r = float(torch.nan_to_num(res, nan=float("inf")).max())
    (x_ref,) = ctx.reference()
    x_ref = x_ref.to(torch.float64)
    kappa = norm(A) * norm(x_ref)
    fwd = norm(X - x_ref) / norm(x_ref)
    ratio = fwd / (kappa * n * eps)
    max_abs = float((X - x_ref).abs().max())
    if not worst_r <= RESIDUAL_THRESHOLD:
        return CheckResult(False, f"min(||AX - I||, ||XA - I||)_F / (||A|| ||X|| n eps) = {worst_r:.3g} > {RESIDUAL_THRESHOLD:g} "
                                  f"(matrix {int(torch.argmax(torch.nan_to_num(res, nan=float('inf'))))})", max_abs, float(fwd.max()))
    if not float(ratio.max()) <= FORWARD_FACTOR:
        i = int(torch.argmax(ratio))
        return CheckResult(False, f"||X - X_ref||_F / ||X_ref||_F = {float(fwd[i]):.3g} > {FORWARD_FACTOR:g} n eps kappa_F = "
                                  f"{FORWARD_FACTOR * n * eps * float(kappa[i]):.3g} (matrix {i})", max_abs, float(fwd.max()))
    return CheckResult(True, f"residual {worst_r:.3g}, forward/(n eps kappa) {float(ratio.max()):.3g}", max_abs, float(fwd.max()))


def _reflect(v, m):
    # (I - 2 v v^T / v^T v) m
    v = v / torch.linalg.vector_norm(v, dim=-1, keepdim=True)
    return m - 2.0 * v[..., :, None] * (v[..., None, :] @ m)


def make_inputs(shape, dtype, gen):
    b, n = shape["batch"], shape["n"]
    sign = randint(gen, (b, n), 0, 2, torch.float64) * 2.0 - 1.0
    d = torch.pow(10.0, uniform(gen, (b, n), torch.float64, -1.0, 1.0)) * sign
    a = torch.diag_embed(d)
    a = _reflect(randn(gen, (b, n), torch.float64), a.mT).mT  # D H3 (H3 symmetric)
    a = _reflect(randn(gen, (b, n), torch.float64), a)        # H2 D H3
    a = _reflect(randn(gen, (b, n), torch.float64), a)        # H1 H2 D H3
    return (a.to(dtype),)


def flops(shape):
    n = shape["n"]
    return float(shape["batch"]) * 2.0 * n ** 3


def nbytes_moved(shape, dtype):
    return 2 * nbytes((shape["batch"], shape["n"], shape["n"]), dtype)


TASK = Task(
    name="batched_inverse_small",
    category="linear_algebra",
    description="inverse of each of B small matrices A [B, n, n] (n 4..8, kappa_2 <= 100), judged by residual and "
                "condition-scaled forward error",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 1000, "n": 4}, "small"),
        Shape("awkward", {"batch": 333, "n": 5}, "awkward"),
        # 2^20 matrices of 8 x 8: 256 MiB read and 256 MiB written in float32.
        Shape("large", {"batch": 2 ** 20, "n": 8}, "large"),
    ],
    dtypes=("float32", "float64"),
    contract=Custom(fn=check, description=(
        f"per matrix, in float64: X finite; min(||AX - I||_F, ||XA - I||_F) / (||A||_F ||X||_F n eps) <= "
        f"{RESIDUAL_THRESHOLD:g}; ||X - X_ref||_F / ||X_ref||_F <= {FORWARD_FACTOR:g} n eps kappa_F(A) against the float64 "
        f"inverse (inputs built with kappa_2 <= 100)")),
    flops=flops,
    bytes=nbytes_moved,
)
