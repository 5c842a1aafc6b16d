"""Row-wise random permutation (shuffle) from an explicit seed: every row of x is shuffled by its
own uniformly random permutation; the permutation is returned too.

Inputs: x [R, n] (float32, or int64 ids), seed (int). Outputs: y [R, n] with y[r, j] = x[r, perm[r, j]],
and perm int64 [R, n]. Candidates use their own generator, so the contract is structural and
statistical (every test at alpha = 1e-6), never element-wise against torch's stream:
  * every row of perm is a permutation of 0..n-1, and y equals x gathered by perm exactly
  * uniformity, position chi-square: with values and positions each cut into B = min(n, 16)
    contiguous bins, the counts of (value bin, position bin) over all R rows are compared with
    R |value bin| |position bin| / n by a chi-square test with (B - 1)^2 degrees of freedom
    (the identity, a fixed permutation or a reversal fail)
  * no order left: the total number of ascents perm[r, j+1] > perm[r, j] is within 4.89
    standard deviations of R (n - 1) / 2 (variance (n + 1) / 12 per row): a random rotation, whose
    positions are uniform, fails it
  * determinism: the same (x, seed) gives identical outputs; another seed changes at least half
    of the expected 1 - 1/n fraction of positions
"""

import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import itemsize, randint, randn, seed_from

ALPHA = 1e-6


def reference(x, seed):
    g = torch.Generator(device=x.device).manual_seed(seed)
    keys = torch.rand(x.shape, generator=g, device=x.device, dtype=torch.float64)
    perm = torch.argsort(keys, dim=1)
    return x.gather(1, perm), perm


def _bins(n, b):
    # bin index of 0..n-1 in b contiguous, near-equal bins; and the bin sizes
    idx = torch.arange(n) * b // n
    return idx, torch.bincount(idx, minlength=b).to(torch.float64)


def check(ctx):
    from scipy import stats  # when checked: importing it costs every run's start 0.8 s
    x, seed = ctx.inputs
    y, perm = ctx.outputs
    r, n = x.shape
    ar = torch.arange(n, device=perm.device)
    if not bool((perm.sort(dim=1).values == ar).all()):
        bad = int((~(perm.sort(dim=1).values == ar).all(dim=1)).sum())
        return CheckResult(False, f"perm: {bad}/{r} rows are not permutations of 0..{n - 1}")
    if not torch.equal(y, x.gather(1, perm)):
        return CheckResult(False, "y is not x gathered by perm")
    p = perm.cpu()
    if n >= 2:
        b = min(n, 16)
        vbin, vsize = _bins(n, b)
        pos_bin = vbin.expand(r, n)
        counts = torch.zeros(b * b, dtype=torch.float64).index_add_(
            0, (vbin[p] * b + pos_bin).flatten(), torch.ones(r * n, dtype=torch.float64)).reshape(b, b)
        expected = r * vsize[:, None] * vsize[None, :] / n
        chi2 = float(((counts - expected) ** 2 / expected).sum())
        pval = stats.chi2.sf(chi2, df=(b - 1) ** 2)
        if pval < ALPHA:
            return CheckResult(False, f"positions not uniform: chi-square {chi2:.1f} on {(b - 1) ** 2} df, p-value {pval:.2g}")
        ascents = float((p[:, 1:] > p[:, :-1]).double().sum())
        mean, sd = r * (n - 1) / 2, math.sqrt(r * (n + 1) / 12)
        if abs(ascents - mean) > 4.89 * sd:
            return CheckResult(False, f"{ascents:.0f} ascents, expected {mean:.0f} +/- {4.89 * sd:.0f}: order is left in the rows")
    y_again, perm_again = ctx.candidate(x, seed)
    if not (torch.equal(perm_again, perm) and torch.equal(y_again, y)):
        return CheckResult(False, "not deterministic: the same seed gave a different output")
    _, perm_other = ctx.candidate(x, seed + 1)
    if n >= 2:
        changed = float((perm_other != perm).double().mean())
        if changed < 0.5 * (1 - 1 / n):
            return CheckResult(False, f"another seed changed only {changed:.1%} of the positions")
    return CheckResult(True, "", 0.0, 0.0)


def make_inputs(shape, dtype, gen):
    r, n = shape["rows"], shape["n"]
    if dtype == torch.int64:
        x = randint(gen, (r, n), 0, 128256, torch.int64)  # token ids (Llama-3 vocabulary)
    else:
        x = randn(gen, (r, n), dtype, scale=2.0, offset=0.5)
    return (x, seed_from(gen))


def flops(shape):
    return float(shape["rows"] * shape["n"])  # one random draw and one move per element


def bytes_moved(shape, dtype):
    r, n = shape["rows"], shape["n"]
    return float(r * n * (2 * itemsize(dtype) + 8))


TASK = Task(
    name="randperm",
    category="random",
    description="shuffle every row of x [R, n] by its own uniformly random permutation from an explicit seed; returns the "
                "shuffled rows and the int64 permutations",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        # many short rows: the position chi-square has ~410 expected counts per cell
        Shape("small", {"rows": 4096, "n": 10}, "small"),
        Shape("awkward", {"rows": 1001, "n": 37}, "awkward"),
        # 33.5M elements: 128 MiB of x, 128 MiB of y (float32) and 256 MiB of int64 permutations.
        Shape("large", {"rows": 16384, "n": 2048}, "large"),
    ],
    dtypes=("float32", "int64"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "structural + statistical, alpha 1e-6: each perm row a permutation of 0..n-1 and y = x gathered by perm exactly; "
        "(value bin, position bin) chi-square with B = min(n,16) bins; total ascents within 4.89 sd of R(n-1)/2; "
        "deterministic per seed; a new seed changes >= half of the expected 1-1/n positions")),
    flops=flops,
    bytes=bytes_moved,
)
