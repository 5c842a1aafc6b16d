"""Dropout with an explicit seed. Candidates use their backend's own RNG, so outputs are never
compared element-wise with torch's; the contract is statistical:

  * every element is 0 or x / (1 - p) (float32: rtol 1e-6; half types: within 1 ulp of the
    float32 value rounded to the dtype); elements with x == 0 are unconstrained
  * keep rate: two-sided binomial test of kept count against 1 - p, rejected at alpha = 1e-6
  * no structure: keep rates of 16 contiguous chunks pass a chi-square test at alpha = 1e-6,
    and the lag-1 autocorrelation of the keep mask is within 5 / sqrt(n) of 0
  * determinism: the same (x, p, seed) gives bit-identical output; another seed gives a mask
    that differs in at least half the expected 2p(1-p) fraction of positions
"""

import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import nbytes, randn, seed_from

ALPHA = 1e-6


def reference(x, p, seed):
    g = torch.Generator(device=x.device).manual_seed(seed)
    keep = torch.rand(x.shape, generator=g, device=x.device) >= p
    return x * keep / (1.0 - p)


def _mask_problem(y, x, p):
    x32, y32 = x.to(torch.float64), y.to(torch.float64)
    scaled = (x.to(torch.float32) / (1.0 - p)).to(x.dtype).to(torch.float64)
    if x.dtype == torch.float32:
        close = (y32 - scaled).abs() <= 1e-6 * scaled.abs()
    else:
        ulp = torch.finfo(x.dtype).eps * scaled.abs().clamp_min(torch.finfo(x.dtype).tiny)
        close = (y32 - scaled).abs() <= ulp
    valid = x32 != 0
    kept = close & valid
    dropped = (y32 == 0) & valid
    bad = valid & ~(kept | dropped)
    if bool(bad.any()):
        i = int(torch.nonzero(bad.flatten())[0])
        return None, f"{int(bad.sum())} elements are neither 0 nor x/(1-p) (first: x={float(x32.flatten()[i]):.6g}, y={float(y32.flatten()[i]):.6g})"
    return kept[valid].flatten().cpu(), None


def check(ctx):
    from scipy import stats  # when checked: importing it costs every run's start 0.8 s
    x, p, seed = ctx.inputs
    (y,) = ctx.outputs
    keep, problem = _mask_problem(y, x, p)
    if problem:
        return CheckResult(False, problem)
    n = keep.numel()
    k = int(keep.sum())
    pval = stats.binomtest(k, n, 1.0 - p).pvalue
    if pval < ALPHA:
        return CheckResult(False, f"keep rate {k / n:.4f} vs expected {1 - p:.4f} (binomial p-value {pval:.2g} < {ALPHA:g})")
    if n >= 16 * 50:
        chunks = keep[: n - n % 16].view(16, -1).double()
        kept_per_chunk = chunks.sum(1)
        size = chunks.shape[1]
        expected = size * (1 - p)
        chi2 = float((((kept_per_chunk - expected) ** 2) / (size * p * (1 - p))).sum())
        chunk_p = stats.chi2.sf(chi2, df=16)
        if chunk_p < ALPHA:
            return CheckResult(False, f"keep rate varies across the tensor (chi-square p-value {chunk_p:.2g} < {ALPHA:g})")
    if n > 1000:
        m = keep.double() - keep.double().mean()
        denom = float((m * m).sum())
        corr = float((m[1:] * m[:-1]).sum()) / denom if denom > 0 else 1.0
        if abs(corr) > 5 / math.sqrt(n):
            return CheckResult(False, f"keep mask is correlated with its neighbour (lag-1 autocorrelation {corr:.4f})")
    (again,) = ctx.candidate(x, p, seed)
    if not torch.equal(torch.nan_to_num(again), torch.nan_to_num(y)):
        return CheckResult(False, "not deterministic: the same seed gave a different output")
    (other,) = ctx.candidate(x, p, seed + 1)
    other_keep, problem = _mask_problem(other, x, p)
    if problem:
        return CheckResult(False, "with seed + 1: " + problem)
    changed = float((other_keep != keep).double().mean())
    if changed < p * (1 - p):
        return CheckResult(False, f"another seed changed only {changed:.4f} of the mask (expected about {2 * p * (1 - p):.4f})")
    return CheckResult(True, "", 0.0, 0.0)


def make_inputs(shape, dtype, gen):
    x = randn(gen, (shape["rows"], shape["cols"]), dtype, scale=2.0, offset=0.5)
    seed = seed_from(gen)
    return (x, float(shape["p"]), seed)


def flops(shape):
    return 2.0 * shape["rows"] * shape["cols"]


def bytes_moved(shape, dtype):
    return 2 * nbytes((shape["rows"], shape["cols"]), dtype)


TASK = Task(
    name="dropout",
    category="random",
    description="dropout with probability p and an explicit seed; judged by distribution, not by torch's RNG stream",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1000, "p": 0.5}, "small"),
        Shape("awkward", {"rows": 1, "cols": 100003, "p": 0.1}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192, "p": 0.2}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "statistical: values in {0, x/(1-p)}; binomial keep-rate test, chunk chi-square and lag-1 autocorrelation at "
        "alpha 1e-6; deterministic per seed; a new seed changes the mask")),
    flops=flops,
    bytes=bytes_moved,
)
