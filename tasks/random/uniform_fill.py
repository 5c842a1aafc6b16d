"""Fill a [R, cols] tensor with uniform random numbers, row r on [low[r], high[r]), from an
explicit seed with a counter-based generator (as torch.rand on CUDA / Triton's tl.rand / JAX's
threefry are): the noise at a position depends only on (seed, position).

Candidates use their backend's own generator, so outputs are never compared element-wise with
torch's. The contract is statistical, with every test at alpha = 1e-6:
  * every value finite and in [low[r], high[r]] (the upper end can be reached by rounding)
  * float32 outputs carry float32 resolution: at most 1% of them are exactly representable in
    bfloat16 (a generator with 8 random bits, or bfloat16 arithmetic, fails; a float32 uniform
    hits a bfloat16 value with probability ~2^-16)
  * u = (y - low) / (high - low) passes a Kolmogorov-Smirnov test against U(0, 1) on a fixed
    strided subsample (2^17 values for float32; 2^14 for 16-bit outputs, where the output
    rounding shifts the CDF by up to ~0.002, well below the test's critical distance 0.021)
  * no structure: the lag-1 correlation of u along rows, and between consecutive rows, is
    within 5 / sqrt(n) of 0 (identical rows or a repeating stream fail)
  * determinism: the same (low, high, cols, seed) gives bit-identical output
  * counter-based: with the same seed and other bounds (low2, high2), (y2 - low2) / (high2 - low2)
    equals u to within the rounding of the output dtype: 4 eps (|low| + |y|) / (high - low) for
    each of the two calls (eps the dtype's machine epsilon)
  * another seed gives another stream: at least half of the values move by more than that
    tolerance
"""

import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import itemsize, pearson, seed_from, strided_subsample, uniform

ALPHA = 1e-6


def reference(low, high, cols, seed):
    g = torch.Generator(device=low.device).manual_seed(seed)
    u = torch.rand((low.shape[0], cols), generator=g, device=low.device, dtype=torch.float32)
    lo, hi = low.to(torch.float32)[:, None], high.to(torch.float32)[:, None]
    return (lo + (hi - lo) * u).to(low.dtype)


def _unit(y, low, high):
    lo, hi = low.to(torch.float64)[:, None], high.to(torch.float64)[:, None]
    return (y.to(torch.float64) - lo) / (hi - lo)


def _tol(y, low, high, eps):
    lo, hi = low.to(torch.float64)[:, None], high.to(torch.float64)[:, None]
    return 4 * eps * (lo.abs() + y.to(torch.float64).abs()) / (hi - lo)


def check(ctx):
    from scipy import stats  # when checked: importing it costs every run's start 0.8 s
    low, high, cols, seed = ctx.inputs
    (y,) = ctx.outputs
    eps = torch.finfo(y.dtype).eps
    yd = y.to(torch.float64)
    lo, hi = low.to(torch.float64)[:, None], high.to(torch.float64)[:, None]
    inside = torch.isfinite(yd) & (yd >= lo) & (yd <= hi)
    if not bool(inside.all()):
        i = int(torch.nonzero(~inside.flatten())[0])
        return CheckResult(False, f"{int((~inside).sum())} values outside [low, high] of their row (first at flat index {i}: "
                                  f"{float(yd.flatten()[i]):.6g})")
    n = y.numel()
    if y.dtype == torch.float32 and n >= 1000:
        coarse = float((y == y.to(torch.bfloat16).to(torch.float32)).double().mean())
        if coarse > 0.01:
            return CheckResult(False, f"{coarse:.1%} of the float32 values are exactly bfloat16 values: not float32 resolution")
    u = _unit(y, low, high)
    sample = strided_subsample(u, 2 ** 17 if y.dtype == torch.float32 else 2 ** 14).cpu().numpy()
    ks = stats.kstest(sample, "uniform")
    if ks.pvalue < ALPHA:
        return CheckResult(False, f"u = (y - low)/(high - low) fails the KS test against U(0,1): D = {ks.statistic:.4g}, "
                                  f"p-value {ks.pvalue:.2g} < {ALPHA:g}")
    if u.shape[1] > 1:
        c = pearson(u[:, 1:].flatten(), u[:, :-1].flatten(), if_constant=1.0)
        if abs(c) > 5 / math.sqrt(u[:, 1:].numel()):
            return CheckResult(False, f"lag-1 correlation along rows {c:.4f} (limit {5 / math.sqrt(u[:, 1:].numel()):.4f})")
    if u.shape[0] > 1:
        c = pearson(u[1:].flatten(), u[:-1].flatten(), if_constant=1.0)
        if abs(c) > 5 / math.sqrt(u[1:].numel()):
            return CheckResult(False, f"correlation between consecutive rows {c:.4f} (limit {5 / math.sqrt(u[1:].numel()):.4f})")
    (again,) = ctx.candidate(low, high, cols, seed)
    if not torch.equal(torch.nan_to_num(again), torch.nan_to_num(y)):
        return CheckResult(False, "not deterministic: the same seed gave a different output")
    low2 = (low.to(torch.float32) * 1.5 - 1.0).to(low.dtype)
    high2 = (high.to(torch.float32) * 0.5 + 1.0).to(high.dtype)
    (y2,) = ctx.candidate(low2, high2, cols, seed)
    tol = _tol(y, low, high, eps) + _tol(y2, low2, high2, eps)
    u2 = _unit(y2, low2, high2)
    moved = ~((u2 - u).abs() <= tol)
    if bool(moved.any()):
        i = int(torch.nonzero(moved.flatten())[0])
        return CheckResult(False, f"not counter-based: with the same seed and other bounds, {int(moved.sum())} values are not the "
                                  f"same uniform (first at flat index {i}: u = {float(u.flatten()[i]):.7g} vs "
                                  f"{float(u2.flatten()[i]):.7g})")
    (y3,) = ctx.candidate(low, high, cols, seed + 1)
    changed = float(((_unit(y3, low, high) - u).abs() > 2 * _tol(y, low, high, eps)).double().mean())
    if changed < 0.5:
        return CheckResult(False, f"another seed changed only {changed:.1%} of the values")
    return CheckResult(True, f"KS p-value {ks.pvalue:.3g}", 0.0, 0.0)


def make_inputs(shape, dtype, gen):
    r = shape["rows"]
    # Per-row bounds straddling zero, low in [-4, -2.5], high in [1, 6].
    low = uniform(gen, (r,), dtype, -4.0, -2.5)
    high = uniform(gen, (r,), dtype, 1.0, 6.0)
    return (low, high, shape["cols"], seed_from(gen))


def flops(shape):
    return 2.0 * shape["rows"] * shape["cols"]  # one multiply-add per value (the generator's own work not counted)


def bytes_moved(shape, dtype):
    return float(shape["rows"] * (shape["cols"] + 2) * itemsize(dtype))


TASK = Task(
    name="uniform_fill",
    category="random",
    description="fill [R, cols] with U[low[r], high[r]) from an explicit seed, counter-based; judged by range, KS, "
                "independence, determinism and seed/bounds behaviour, not by torch's RNG stream",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1000}, "small"),
        Shape("awkward", {"rows": 5, "cols": 20001}, "awkward"),
        # 512 MiB of float32 written.
        Shape("large", {"rows": 8192, "cols": 16384}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "statistical, alpha 1e-6: values in [low_r, high_r]; float32 resolution (<= 1% bf16-representable); KS of "
        "(y-low)/(high-low) vs U(0,1) on a strided subsample; lag-1 row and cross-row correlation within 5/sqrt(n); "
        "deterministic per seed; counter-based (same uniforms for other bounds, within 4 eps rounding); a new seed moves >= 50%")),
    flops=flops,
    bytes=bytes_moved,
)
