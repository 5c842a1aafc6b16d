"""Bernoulli mask with a probability per element (torch.bernoulli(p) semantics: the output holds
0.0 and 1.0 in the dtype of p), from an explicit seed.

Inputs: p [R, C] (values in [0, 1]; anything outside is clamped), seed (int). Output: y [R, C].
Candidates use their own generator; the contract is structural and statistical, every test at
alpha = 1e-6, never element-wise against torch's stream:
  * every value is exactly 0 or 1; p == 0 gives 0 and p == 1 gives 1
  * calibration: elements are binned by p ((0, 1e-3), [1e-3, 1e-2), [1e-2, 0.1), [0.1, 0.3),
    [0.3, 0.5), [0.5, 0.7), [0.7, 0.9), [0.9, 0.99), [0.99, 1 - 2^-9]); per bin the count of ones is
    compared with sum p (variance sum p(1-p)), and the squared z-scores are summed into a
    chi-square test with one degree of freedom per cell (consecutive bins are pooled until a
    cell's variance reaches 25, so the normal approximation holds; a remainder is a last cell)
  * rare events near certainty: for p in (1 - 2^-9, 1), the probabilities bfloat16 rounds to 1,
    the number of zeros is tested against Poisson(sum (1 - p)) (two-sided). A quarter of the
    inputs are such p, with 1 - p in [2^-11, 2^-9), giving about 20 expected zeros on the small
    shape: a kernel that handles p in bfloat16 (or compares against a coarse uniform) writes none
    and fails
  * no structure: lag-1 correlation of y - p along rows within 5/sqrt(n)
  * determinism for a fixed seed; another seed changes at least half of the expected
    sum 2 p (1 - p) positions
"""

import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import itemsize, pearson, randint, seed_from, uniform

ALPHA = 1e-6
NEAR_ONE = 1.0 - 2.0 ** -9
EDGES = (0.0, 1e-3, 1e-2, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, NEAR_ONE)


def reference(p, seed):
    g = torch.Generator(device=p.device).manual_seed(seed)
    # p outside [0, 1] never occurs in the inputs; it is clamped so that the op is total.
    return torch.bernoulli(p.to(torch.float32).clamp(0.0, 1.0), generator=g).to(p.dtype)


def _poisson_two_sided(k, lam):
    from scipy import stats  # when checked: importing it costs every run's start 0.8 s
    lo = stats.poisson.cdf(k, lam)
    hi = stats.poisson.sf(k - 1, lam)
    return min(1.0, 2 * min(lo, hi))


def check(ctx):
    from scipy import stats  # when checked: importing it costs every run's start 0.8 s
    p, seed = ctx.inputs
    (y,) = ctx.outputs
    pd, yd = p.to(torch.float64), y.to(torch.float64)
    binary = (yd == 0) | (yd == 1)
    if not bool(binary.all()):
        i = int(torch.nonzero(~binary.flatten())[0])
        return CheckResult(False, f"{int((~binary).sum())} values are neither 0 nor 1 (first at flat index {i}: {float(yd.flatten()[i]):.6g})")
    forced = ((pd == 0) & (yd != 0)) | ((pd == 1) & (yd != 1))
    if bool(forced.any()):
        return CheckResult(False, f"{int(forced.sum())} values contradict p == 0 or p == 1")
    # calibration by bins, pooling bins whose variance is too small for a normal approximation
    chi2, df = 0.0, 0
    acc_o = acc_e = acc_v = 0.0
    for lo, hi in zip(EDGES[:-1], EDGES[1:]):
        sel = (pd > 0) & (pd < 1) & (pd >= lo) & ((pd < hi) if hi < NEAR_ONE else (pd <= hi))
        acc_o += float(yd[sel].sum())
        acc_e += float(pd[sel].sum())
        acc_v += float((pd[sel] * (1 - pd[sel])).sum())
        if acc_v >= 25:
            chi2 += (acc_o - acc_e) ** 2 / acc_v
            df += 1
            acc_o = acc_e = acc_v = 0.0
    if acc_v > 0:
        chi2 += (acc_o - acc_e) ** 2 / acc_v
        df += 1
    if df:
        pval = stats.chi2.sf(chi2, df=df)
        if pval < ALPHA:
            return CheckResult(False, f"calibration: chi-square {chi2:.1f} on {df} df over p bins, p-value {pval:.2g}")
    near = (pd > NEAR_ONE) & (pd < 1)
    if bool(near.any()):
        lam = float((1 - pd[near]).sum())
        zeros = int((yd[near] == 0).sum())
        pval = _poisson_two_sided(zeros, lam)
        if pval < ALPHA:
            return CheckResult(False, f"p in (1 - 2^-9, 1): {zeros} zeros, expected Poisson({lam:.2f}) (p-value {pval:.2g})")
    resid = yd - pd
    if resid.shape[-1] > 1 and resid.numel() > 1000:
        c = pearson(resid[:, 1:].flatten(), resid[:, :-1].flatten(), if_constant=0.0)
        if abs(c) > 5 / math.sqrt(resid[:, 1:].numel()):
            return CheckResult(False, f"lag-1 correlation of y - p along rows {c:.4f}")
    (again,) = ctx.candidate(p, seed)
    if not torch.equal(torch.nan_to_num(again), torch.nan_to_num(y)):
        return CheckResult(False, "not deterministic: the same seed gave a different output")
    (other,) = ctx.candidate(p, seed + 1)
    expected_change = float((2 * pd * (1 - pd)).sum())
    changed = float((other.to(torch.float64) != yd).double().sum())
    if changed < 0.5 * expected_change:
        return CheckResult(False, f"another seed changed only {changed:.0f} values (expected about {expected_change:.0f})")
    return CheckResult(True, "", 0.0, 0.0)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    # A mixture: 10% exactly 0, 10% exactly 1, 25% near-certain (1 - p in [2^-11, 2^-9)), 20% rare
    # (p log-uniform in [1e-5, 1e-2]), 35% uniform on (0, 1).
    kind = randint(gen, (r, c), 0, 20)
    u = uniform(gen, (r, c), torch.float32, 0.0, 1.0)
    near = 1.0 - (2.0 ** -11 + u * (2.0 ** -9 - 2.0 ** -11))
    rare = torch.pow(10.0, -5.0 + 3.0 * u)
    p = torch.where(kind < 2, 0.0, torch.where(kind < 4, 1.0, torch.where(kind < 9, near, torch.where(kind < 13, rare, u))))
    return (p.to(dtype), seed_from(gen))


def flops(shape):
    return float(shape["rows"] * shape["cols"])  # one comparison per element (the generator's own work not counted)


def bytes_moved(shape, dtype):
    return float(2 * shape["rows"] * shape["cols"] * itemsize(dtype))


TASK = Task(
    name="bernoulli_mask",
    category="random",
    description="y = bernoulli(p) elementwise with per-element probabilities p [R, C] and an explicit seed; output 0./1. "
                "in the dtype of p",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 1, "cols": 100003}, "awkward"),
        # 512 MiB of float32 probabilities read, 512 MiB written.
        Shape("large", {"rows": 8192, "cols": 16384}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "statistical, alpha 1e-6: values exactly 0/1, p==0 -> 0 and p==1 -> 1; chi-square calibration over p bins; zeros for "
        "p in (1-2^-9, 1) against Poisson(sum(1-p)); lag-1 correlation of y-p within 5/sqrt(n); deterministic per seed; a new "
        "seed changes >= half the expected sum 2p(1-p)")),
    flops=flops,
    bytes=bytes_moved,
)
