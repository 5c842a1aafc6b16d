"""Categorical sampling with replacement from per-row weights (the sampling step of LLM decoding
after top-k / top-p filtering), with the log-probability of every sample, from an explicit seed.

Inputs: weights [R, K] (non-negative, not necessarily normalized: P(k) = w[k] / sum_j w[j]; rows
hold between 1 and 12 nonzero weights, the rest exactly zero as filtering leaves them),
num_samples S (int), seed (int). Outputs: samples int64 [R, S] and logprobs float32 [R, S],
logprobs[r, s] = log P_r(samples[r, s]).

Candidates use their own generator; the contract is structural and statistical, every test at
alpha = 1e-6, never element-wise against torch's stream:
  * every sample in [0, K) with nonzero weight
  * logprobs within 1e-5 (absolute) of log(w[k] / sum w) computed in float64 from the given
    weights. Derivation: in float32 the normalization of at most 12 nonzero terms and one log
    cost a few ulps, |error| < 14 * 2^-24 + 2^-24 * |log p| < 1.2e-6 (p >= e^-2 / 12, so
    |log p| < 4.5); 1e-5 leaves room for any order and for log(w) - log(sum), while rounding the
    weights to bfloat16 moves log p by up to 2^-8 (the bfloat16 control fails).
  * goodness of fit: chi-square of the per-row category counts against S * P over all rows
    (cells with expected count < 5 pooled per row; the inputs make every expected count >= 11)
  * independence of consecutive samples: the number of s with samples[r, s] == samples[r, s+1]
    is within 4.89 standard deviations of its expectation sum_r (S-1) q_r, q_r = sum_k P_r(k)^2
    (variance with the 1-dependent overlap term), so sorted or repeated output fails
  * determinism for a fixed seed; another seed changes at least half of the expected
    1 - q_r fraction of samples
"""

import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom
from mkbench.taskkit import itemsize, randint, seed_from, uniform

ALPHA = 1e-6
LOGPROB_ATOL = 1e-5
MAX_SUPPORT = 12


def _probs(weights):
    w = weights.to(torch.float64)
    return w / w.sum(dim=-1, keepdim=True)


def reference(weights, num_samples, seed):
    g = torch.Generator(device=weights.device).manual_seed(seed)
    p = _probs(weights)
    samples = torch.multinomial(p, num_samples, replacement=True, generator=g)
    return samples, p.gather(1, samples).log().to(torch.float32)


def check(ctx):
    from scipy import stats  # when checked: importing it costs every run's start 0.8 s
    weights, num_samples, seed = ctx.inputs
    samples, logprobs = ctx.outputs
    r, k = weights.shape
    s = num_samples
    inrange = (samples >= 0) & (samples < k)
    if not bool(inrange.all()):
        return CheckResult(False, f"{int((~inrange).sum())} samples outside [0, {k})")
    p = _probs(weights)
    ps = p.gather(1, samples)
    if not bool((ps > 0).all()):
        i = int(torch.nonzero((ps <= 0).flatten())[0])
        return CheckResult(False, f"{int((ps <= 0).sum())} samples of zero-weight categories (first at flat index {i}: "
                                  f"category {int(samples.flatten()[i])})")
    err = (logprobs.to(torch.float64) - ps.log()).abs()
    if not bool((err <= LOGPROB_ATOL).all()):
        i = int(torch.argmax(torch.nan_to_num(err, nan=float("inf")).flatten()))
        return CheckResult(False, f"logprobs: {int((~(err <= LOGPROB_ATOL)).sum())} values off by more than {LOGPROB_ATOL:g} "
                                  f"(worst at flat index {i}: got {float(logprobs.flatten()[i]):.7g}, expected "
                                  f"{float(ps.log().flatten()[i]):.7g})", float(torch.nan_to_num(err, nan=float('inf')).max()))
    counts = torch.zeros(r, k, dtype=torch.float64, device=samples.device).scatter_add_(
        1, samples, torch.ones(samples.shape, dtype=torch.float64, device=samples.device))
    expected = s * p
    big = expected >= 5
    small_o = (counts * ~big).sum(1)
    small_e = (expected * ~big).sum(1)
    chi2 = float(((counts - expected) ** 2 / expected.clamp_min(1e-300))[big].sum())
    df = int(big.sum(1).sum()) - r
    pooled = small_e >= 5
    chi2 += float(((small_o - small_e) ** 2 / small_e.clamp_min(1e-300))[pooled].sum())
    df += int(pooled.sum())
    if df > 0:
        pval = stats.chi2.sf(chi2, df=df)
        if pval < ALPHA:
            return CheckResult(False, f"counts do not fit the weights: chi-square {chi2:.1f} on {df} df, p-value {pval:.2g}")
    if s > 2:
        q = (p * p).sum(1)
        q3 = (p ** 3).sum(1)
        same = float((samples[:, 1:] == samples[:, :-1]).double().sum())
        mean = float(((s - 1) * q).sum())
        var = float(((s - 1) * q * (1 - q) + 2 * (s - 2) * (q3 - q * q)).sum())
        if var > 0 and abs(same - mean) > 4.89 * math.sqrt(var):
            return CheckResult(False, f"{same:.0f} consecutive equal samples, expected {mean:.0f} +/- {4.89 * math.sqrt(var):.0f}: "
                                      "samples are not independent")
    again, lp_again = ctx.candidate(weights, num_samples, seed)
    if not (torch.equal(again, samples) and torch.equal(torch.nan_to_num(lp_again), torch.nan_to_num(logprobs))):
        return CheckResult(False, "not deterministic: the same seed gave a different output")
    other, _ = ctx.candidate(weights, num_samples, seed + 1)
    expected_change = float((1 - (p * p).sum(1)).mean())
    changed = float((other != samples).double().mean())
    if changed < 0.5 * expected_change:
        return CheckResult(False, f"another seed changed only {changed:.1%} of the samples (expected about {expected_change:.1%})")
    return CheckResult(True, "", float(err.max()) if err.numel() else 0.0, 0.0)


def make_inputs(shape, dtype, gen):
    r, k = shape["rows"], shape["K"]
    # Each row's support: m in [1, 12] categories drawn among those congruent to a row-specific
    # residue mod 4 (so a sample moved by +/-3 always lands on a zero weight), with weights
    # exp(U[-1, 1]) times a row scale 10^U[-3, 3] (unnormalized).
    residue = randint(gen, (r, 1), 0, 4)
    cls = torch.arange(k, device=gen.device)[None, :] % 4
    keys = uniform(gen, (r, k), torch.float32, 0.0, 1.0) + (cls != residue).to(torch.float32) * 2.0
    chosen = torch.argsort(keys, dim=1)[:, :MAX_SUPPORT]
    m = randint(gen, (r, 1), 1, MAX_SUPPORT + 1)
    keep = torch.arange(MAX_SUPPORT, device=gen.device)[None, :] < m
    w_support = torch.exp(uniform(gen, (r, MAX_SUPPORT), torch.float32, -1.0, 1.0)) * keep
    row_scale = torch.pow(10.0, uniform(gen, (r, 1), torch.float32, -3.0, 3.0))
    weights = torch.zeros(r, k, device=gen.device).scatter_(1, chosen, w_support * row_scale)
    return (weights.to(dtype), shape["samples"], seed_from(gen))


def flops(shape):
    # an inverse-CDF draw per sample over the row's prefix sums: K adds per row plus a search
    return float(shape["rows"] * (shape["K"] + shape["samples"] * math.log2(shape["K"])))


def bytes_moved(shape, dtype):
    r, k, s = shape["rows"], shape["K"], shape["samples"]
    return float(r * k * itemsize(dtype) + r * s * (8 + 4))


TASK = Task(
    name="categorical_sample",
    category="random",
    description="sample S categories with replacement per row from unnormalized weights [R, K] (top-k filtered: 1..12 "
                "nonzero) with an explicit seed; returns int64 samples and float32 log-probabilities",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "K": 100, "samples": 1024}, "small"),
        Shape("awkward", {"rows": 7, "K": 50, "samples": 1001}, "awkward"),
        # a 32768-entry vocabulary for 4096 sequences: 512 MiB of float32 weights read.
        Shape("large", {"rows": 4096, "K": 32768, "samples": 1024}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "structural + statistical, alpha 1e-6: samples in range with nonzero weight; logprobs within 1e-5 of "
        "log(w/sum w) (float64); pooled chi-square of counts vs S*P; consecutive-equal count within 4.89 sd of "
        "sum (S-1) sum_k P^2; deterministic per seed; a new seed changes >= half the expected fraction")),
    flops=flops,
    bytes=bytes_moved,
)
