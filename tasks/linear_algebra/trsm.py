"""Triangular solve with many right-hand sides, L X = B (BLAS trsm: side left, lower,
no transpose, non-unit diagonal), judged column by column by backward and forward error.

Only the lower triangle (diagonal included) of L defines the system: the strict upper triangle
holds random garbage that a correct solver never reads, so a kernel that solves with the full
matrix fails.

Conditioning (built into the inputs, as for tasks/linear_algebra/trsv.py): the strict lower
triangle is N(0, 1/n), the diagonal has magnitude U[1, 2] with a random sign; measured kappa_2(L)
stays near 5 from n = 64 to n = 2048 (4.5 .. 5.2), and the tolerance takes kappa <= 10. The right-
hand sides have column scales spread over two decades, so each column is judged on its own.
"""

import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import nbytes, randint, randn, uniform

# Backward error per column: substitution is backward stable (Higham, Thm 8.5; blocked trsm with
# GEMM updates satisfies the same normwise bound, Higham section 13.1): ||L x - b||_inf <= gamma_n
# ||L||_inf ||x||_inf, so r = ||L x - b||_inf / (||L||_inf ||x||_inf n eps) <= ~0.5. Measured values
# are below 0.004 (n = 64) and fall with n; the threshold 10 leaves room for every order of the
# sums, while a solve in bfloat16 gives r ~ 2^-9 / (n eps) (16 at n = 1024, more below).
RESIDUAL_THRESHOLD = 10.0
# Forward error per column: ||x - x_ref||_2 / ||x_ref||_2 <= kappa_2 * backward error <= KAPPA_BOUND n eps
# (first order); measured below 1.7e-7 for float32 up to n = 4096, against a tolerance of 1.2e-3 at
# n = 1024; a bfloat16 solve measures 4.5e-3 .. 4.8e-3 (n = 32, 67), about kappa * 2^-9.
KAPPA_BOUND = 10.0


def reference(L, B):
    return torch.linalg.solve_triangular(L.tril(), B, upper=False).contiguous()


def make_inputs(shape, dtype, gen):
    n, m = shape["n"], shape["m"]
    g = randn(gen, (n, n), torch.float32, scale=1.0)
    lower = torch.ones(n, n, dtype=torch.bool, device=gen.device).tril(-1)
    L = torch.where(lower, g * (1.0 / math.sqrt(n)), g)
    sign = randint(gen, (n,), 0, 2, torch.float32) * 2.0 - 1.0
    L.diagonal().copy_(uniform(gen, (n,), torch.float32, 1.0, 2.0) * sign)
    col_scale = torch.pow(10.0, uniform(gen, (1, m), torch.float32, -1.0, 1.0))
    B = randn(gen, (n, m), torch.float32, scale=1.0, offset=0.25) * col_scale
    return (L.to(dtype), B.to(dtype))


def check(ctx):
    L, B = ctx.inputs
    (X,) = ctx.outputs
    n = L.shape[-1]
    eps = torch.finfo(ctx.dtype).eps
    if not bool(torch.isfinite(X).all()):
        return CheckResult(False, f"X: {int((~torch.isfinite(X)).sum())} non-finite elements")
    L64 = L.to(torch.float64).tril()
    X64, B64 = X.to(torch.float64), B.to(torch.float64)
    res = (L64 @ X64 - B64).abs().amax(0)
    denom = L64.abs().sum(-1).max() * X64.abs().amax(0) * (n * eps)
    r = torch.where(denom > 0, res / denom.clamp_min(1e-300),
                    torch.where(res > 0, torch.full_like(res, math.inf), torch.zeros_like(res)))
    worst_r = float(r.max())
    (x_ref,) = ctx.reference()
    x_ref = x_ref.to(torch.float64)
    diff = X64 - x_ref
    fwd = torch.linalg.vector_norm(diff, dim=0) / torch.linalg.vector_norm(x_ref, dim=0).clamp_min(1e-300)
    worst_fwd = float(fwd.max())
    fwd_tol = KAPPA_BOUND * n * eps
    max_abs = float(diff.abs().max())
    if not worst_r <= RESIDUAL_THRESHOLD:
        return CheckResult(False, f"scaled residual ||Lx-b||/(||L|| ||x|| n eps) = {worst_r:.3g} > {RESIDUAL_THRESHOLD:g} "
                                  f"(column {int(torch.argmax(r))}); forward error {worst_fwd:.3g}", max_abs, worst_fwd)
    if not worst_fwd <= fwd_tol:
        return CheckResult(False, f"relative forward error {worst_fwd:.3g} > {fwd_tol:.3g} (column {int(torch.argmax(fwd))}); "
                                  f"scaled residual {worst_r:.3g}", max_abs, worst_fwd)
    return CheckResult(True, f"scaled residual {worst_r:.3g}, forward error {worst_fwd:.3g}", max_abs, worst_fwd)


def flops(shape):
    n, m = shape["n"], shape["m"]
    return float(m) * n * n  # n(n-1)/2 multiply-adds and n divisions per column


def nbytes_moved(shape, dtype):
    n, m = shape["n"], shape["m"]
    return nbytes((n * (n + 1) // 2,), dtype) + 2 * nbytes((n, m), dtype)


TASK = Task(
    name="trsm",
    category="linear_algebra",
    description="triangular solve with many right-hand sides L X = B (left, lower, non-unit), L [n, n], B [n, m]; the "
                "strict upper triangle of L is garbage and must be ignored",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"n": 32, "m": 48}, "small"),
        Shape("awkward", {"n": 67, "m": 33}, "awkward"),
        # a 1024-wide panel against 65536 columns: B and X are 256 MiB each in float32.
        Shape("large", {"n": 1024, "m": 65536}, "large"),
    ],
    dtypes=("float32", "float64"),
    contract=Custom(fn=check, description=(
        f"per column, in float64: ||L x - b||_inf / (||L||_inf ||x||_inf n eps) <= {RESIDUAL_THRESHOLD:g} (L the lower "
        f"triangle) and ||x - x_ref||_2 / ||x_ref||_2 <= {KAPPA_BOUND:g} n eps against the float64 solution (kappa_2(L) < 10 "
        f"by construction); X finite")),
    flops=flops,
    bytes=nbytes_moved,
)
