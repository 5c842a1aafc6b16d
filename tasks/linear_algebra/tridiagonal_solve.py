"""Batched tridiagonal solve T x = b (the Thomas algorithm's problem, cuSPARSE gtsv2StridedBatch
layout), judged by backward and forward error.

Inputs: dl, d, du, b, each [B, n]: row i of system s reads dl[s, i] x[i-1] + d[s, i] x[i] +
du[s, i] x[i+1] = b[s, i]. dl[:, 0] and du[:, n-1] lie outside the matrix and hold garbage that
must be ignored. Output: x [B, n].

Conditioning (built into the inputs): dl, du ~ N(0, 1) and |d| = |dl| + |du| + U[0.5, 2] with a
random sign, so every row is strictly diagonally dominant with margin >= 0.5 and elimination
needs no pivoting. Varah's bound ||T^-1||_inf <= 1 / min_i (|d_i| - |dl_i| - |du_i|) gives a
per-system condition bound kappa_V = ||T||_inf / min margin (measured up to ~30), which the
forward tolerance uses.
"""

import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import itemsize, randint, randn, uniform

# Backward error, with no factor n: for tridiagonal elimination (Higham, Accuracy and Stability,
# section 9.6, Thms 9.11-9.12) the computed x solves (T + dT) x = b with |dT| <= f(u) |L||U|,
# f(u) ~ 4u, and |L||U| <= 3|T| for a diagonally dominant T, so r = ||T x - b||_inf /
# (||T||_inf ||x||_inf eps) <= ~6 whatever n. Measured in float32: Thomas r < 0.35, parallel
# cyclic reduction r < 0.94 (n = 32 .. 4096). A solve from bfloat16-rounded inputs gives r ~ 1e4.
RESIDUAL_THRESHOLD = 16.0
# Forward error: ||x - x_ref||_inf / ||x_ref||_inf <= kappa_inf(T) * (backward error) <=
# RESIDUAL_THRESHOLD * kappa_V * eps (first order). Measured: at most 0.13 kappa_V eps (Thomas,
# PCR); bfloat16-rounded inputs: ~3000 kappa_V eps.


def _as_dense_rows(dl, d, du, x):
    # T x for each system, with dl[:, 0] and du[:, n-1] excluded
    y = d * x
    y[:, 1:] += dl[:, 1:] * x[:, :-1]
    y[:, :-1] += du[:, :-1] * x[:, 1:]
    return y


def _thomas(dl, d, du, b):
    n = d.shape[1]
    c = torch.zeros_like(d)
    y = torch.empty_like(d)
    den = d[:, 0]
    if n > 1:
        c[:, 0] = du[:, 0] / den
    y[:, 0] = b[:, 0] / den
    for i in range(1, n):
        den = d[:, i] - dl[:, i] * c[:, i - 1]
        if i < n - 1:
            c[:, i] = du[:, i] / den
        y[:, i] = (b[:, i] - dl[:, i] * y[:, i - 1]) / den
    x = torch.empty_like(d)
    x[:, n - 1] = y[:, n - 1]
    for i in range(n - 2, -1, -1):
        x[:, i] = y[:, i] - c[:, i] * x[:, i + 1]
    return x


def reference(dl, d, du, b):
    return _thomas(*(t.to(torch.float64) for t in (dl, d, du, b))).to(d.dtype)


def check(ctx):
    dl, d, du, b = (t.to(torch.float64) for t in ctx.inputs)
    (x,) = ctx.outputs
    eps = torch.finfo(ctx.dtype).eps
    if not bool(torch.isfinite(x).all()):
        return CheckResult(False, f"x: {int((~torch.isfinite(x)).sum())} non-finite elements")
    xd = x.to(torch.float64)
    off = torch.zeros_like(d)
    off[:, 1:] += dl[:, 1:].abs()
    off[:, :-1] += du[:, :-1].abs()
    t_norm = (d.abs() + off).amax(1)
    kappa_v = t_norm / (d.abs() - off).amin(1)
    res = (_as_dense_rows(dl, d, du, xd) - b).abs().amax(1)
    denom = t_norm * xd.abs().amax(1) * eps
    r = torch.where(denom > 0, res / denom.clamp_min(1e-300),
                    torch.where(res > 0, torch.full_like(res, math.inf), torch.zeros_like(res)))
    worst_r = float(r.max())
    (x_ref,) = ctx.reference()
    x_ref = x_ref.to(torch.float64)
    diff = xd - x_ref
    fwd = diff.abs().amax(1) / x_ref.abs().amax(1).clamp_min(1e-300)
    ratio = fwd / (kappa_v * eps)
    worst_fwd = float(fwd.max())
    max_abs = float(diff.abs().max())
    if not worst_r <= RESIDUAL_THRESHOLD:
        return CheckResult(False, f"scaled residual ||Tx-b||/(||T|| ||x|| eps) = {worst_r:.3g} > {RESIDUAL_THRESHOLD:g} "
                                  f"(system {int(torch.argmax(r))}); forward error {worst_fwd:.3g}", max_abs, worst_fwd)
    if not float(ratio.max()) <= RESIDUAL_THRESHOLD:
        i = int(torch.argmax(ratio))
        return CheckResult(False, f"relative forward error {float(fwd[i]):.3g} > {RESIDUAL_THRESHOLD:g} kappa_V eps = "
                                  f"{RESIDUAL_THRESHOLD * float(kappa_v[i]) * eps:.3g} (system {i}); scaled residual "
                                  f"{worst_r:.3g}", max_abs, worst_fwd)
    return CheckResult(True, f"scaled residual {worst_r:.3g}, forward error {worst_fwd:.3g}", max_abs, worst_fwd)


def make_inputs(shape, dtype, gen):
    bsz, n = shape["batch"], shape["n"]
    dl = randn(gen, (bsz, n), torch.float32)
    du = randn(gen, (bsz, n), torch.float32)
    inner_dl, inner_du = dl.clone(), du.clone()
    inner_dl[:, 0] = 0.0
    inner_du[:, -1] = 0.0
    sign = randint(gen, (bsz, n), 0, 2, torch.float32) * 2.0 - 1.0
    d = sign * (inner_dl.abs() + inner_du.abs() + uniform(gen, (bsz, n), torch.float32, 0.5, 2.0))
    # garbage outside the matrix, large enough to break a solver that uses it
    dl[:, 0] = randn(gen, (bsz,), torch.float32, scale=5.0, offset=3.0)
    du[:, -1] = randn(gen, (bsz,), torch.float32, scale=5.0, offset=3.0)
    b = randn(gen, (bsz, n), torch.float32, scale=1.0, offset=0.25)
    return tuple(t.to(dtype) for t in (dl, d, du, b))


def flops(shape):
    return 8.0 * shape["batch"] * shape["n"]  # elimination 5 + back substitution 2 + a division per row


def nbytes_moved(shape, dtype):
    return float(5 * shape["batch"] * shape["n"] * itemsize(dtype))


TASK = Task(
    name="tridiagonal_solve",
    category="linear_algebra",
    description="batched tridiagonal solve T x = b (diagonally dominant, no pivoting needed) with sub/main/super "
                "diagonals dl, d, du [B, n]; dl[:, 0] and du[:, n-1] are garbage and must be ignored",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 64, "n": 32}, "small"),
        # n = 1 systems would have no off-diagonal at all; odd sizes instead
        Shape("awkward", {"batch": 7, "n": 1001}, "awkward"),
        # 8192 systems of 4096 unknowns (ADI / spline solves): 4 inputs + 1 output x 128 MiB in float32.
        Shape("large", {"batch": 8192, "n": 4096}, "large"),
    ],
    dtypes=("float32", "float64"),
    contract=Custom(fn=check, description=(
        f"per system, in float64: ||T x - b||_inf / (||T||_inf ||x||_inf eps) <= {RESIDUAL_THRESHOLD:g} (no factor n: "
        f"diagonally dominant tridiagonal elimination), and ||x - x_ref||_inf / ||x_ref||_inf <= {RESIDUAL_THRESHOLD:g} "
        f"kappa_V eps with kappa_V = ||T||_inf / min_i(|d_i| - |dl_i| - |du_i|) (Varah); x finite")),
    flops=flops,
    bytes=nbytes_moved,
)
