"""Nucleus (top-p) filtering of next-token logits with temperature, as LLM samplers do it (HF's
TopPLogitsWarper, vLLM's sampler), with a written, order-independent rule for ties.

Contract, written out:
  * inputs: logits [B, V] in the task dtype; temperature [B] and top_p [B], float32, per request
  * z = logits / temperature[b]; probs = softmax(z) over the row, in float32 or wider, from the
    unrounded z (not z rounded to the logits dtype)
  * mass_above[i] = sum of probs[j] over tokens j with logits[j] > logits[i] (strictly greater:
    tokens with equal logits have the same mass above them, whatever order a sort put them in)
  * token i is kept iff mass_above[i] < top_p[b] (so the most likely token is always kept);
    output [B, V] in the task dtype: z rounded to the dtype where kept, -inf elsewhere
  * comparison, against float64 arithmetic on the same inputs: where mass_above < p - 2e-4 the
    output must be finite and within the dtype's default tolerance of z (x rms of the kept z);
    where mass_above > p + 2e-4 it must be exactly -inf; within 2e-4 of p either is accepted
    (MASS_WINDOW: float32 sums of up to 128k probabilities err by that order, see below)
A sampler that sorts, cumsums and keeps the first token whose cumulative mass reaches p (HF's
rule) agrees with this except on tied logits at the boundary, where it keeps only some of them.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, CheckResult, Custom, compare_close
from mkbench.task import DTYPE_NAMES
from mkbench.taskkit import itemsize, randn, uniform

# The mass above a token is a float32 sum of sorted probabilities; its error is that of the sum
# plus that of the softmax normaliser (a relative error c of sum(exp) scales every prob by 1 - c).
# Measured on CPU (torch float32 softmax, sort and cumsum), 64 rows x 2 seeds of these inputs:
# max |mass - mass64| = 6.5e-7 at V = 1000 and 4.8e-5 at V = 128256 (the large shape); 2e-4 leaves
# 4x over that, while rounding z to bfloat16 before the softmax errs by 6e-3 .. 2.5e-2 in mass.
MASS_WINDOW = 2e-4


def _mass_above(keys, probs):
    order = torch.sort(keys, dim=-1, descending=True, stable=True)
    sorted_keys, idx = order.values, order.indices
    p = probs.gather(1, idx)
    exclusive = torch.cat((torch.zeros_like(p[:, :1]), torch.cumsum(p, dim=-1)[:, :-1]), dim=-1)
    # Tied keys take the exclusive sum at the first position of their run.
    pos = torch.arange(keys.shape[-1], device=keys.device).expand_as(sorted_keys)
    starts = torch.ones_like(sorted_keys, dtype=torch.bool)
    starts[:, 1:] = sorted_keys[:, 1:] != sorted_keys[:, :-1]
    first = torch.where(starts, pos, torch.zeros_like(pos)).cummax(dim=-1).values
    return torch.empty_like(p).scatter_(1, idx, exclusive.gather(1, first))


def _z_and_mass(logits, temperature):
    compute = torch.promote_types(logits.dtype, torch.float32)
    z = logits.to(compute) / temperature.to(compute)[:, None]
    return z, _mass_above(logits, torch.softmax(z, dim=-1))


def reference(logits, temperature, top_p):
    z, mass = _z_and_mass(logits, temperature)
    keep = mass < top_p.to(mass.dtype)[:, None]
    return z.to(logits.dtype).masked_fill(~keep, float("-inf"))


def check(ctx):
    logits, temperature, top_p = ctx.inputs
    (out,) = ctx.outputs
    z, mass = _z_and_mass(logits.to(torch.float64), temperature.to(torch.float64))
    p = top_p.to(torch.float64)[:, None]
    keep, drop = mass < p - MASS_WINDOW, mass > p + MASS_WINDOW
    either = ~(keep | drop)
    o = out.to(torch.float64)
    if bool(torch.isnan(o).any()):
        return CheckResult(False, f"{int(torch.isnan(o).sum())} NaN outputs")
    if not bool(torch.isneginf(o[drop]).all()):
        n = int((~torch.isneginf(o[drop])).sum())
        return CheckResult(False, f"{n} tokens with mass above them > top_p + {MASS_WINDOW:g} were not set to -inf")
    if bool(torch.isinf(o[keep]).any()):
        n = int(torch.isinf(o[keep]).sum())
        return CheckResult(False, f"{n} tokens with mass above them < top_p - {MASS_WINDOW:g} were removed (or are inf)")
    # Kept values (and boundary tokens the candidate kept) against z at the dtype's tolerance.
    judged = keep | (either & torch.isfinite(o))
    tol = DEFAULT_TOLERANCES[DTYPE_NAMES[out.dtype]]
    res = compare_close(o[judged], z[judged], tol, "rms", "kept logits")
    if not res.ok:
        return res
    return CheckResult(True, f"{int(either.sum())} boundary tokens", res.max_abs_err, res.max_rel_err)


def make_inputs(shape, dtype, gen):
    b, v = shape["B"], shape["V"]
    # LM-like rows: a per-row offset and peakedness, a heavy upper tail, and values on a 1/32 grid
    # (exact in float32; bfloat16 rounds coarser), so tied logits are common, in the nucleus and
    # at its boundary.
    offset = randn(gen, (b, 1), torch.float32, scale=3.0)
    spread = torch.exp2(randn(gen, (b, 1), torch.float32, scale=0.5)) * 1.5
    x = randn(gen, (b, v), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=4.0) * spread + offset
    # The last token of the last row is that row's most likely (always kept): the tail of a row
    # is where block-wise kernels go wrong.
    x[-1, -1] = x[-1].max() + 1.0
    logits = (torch.round(x * 32.0) / 32.0).to(dtype)
    temperature = uniform(gen, (b,), torch.float32, 0.5, 1.5)
    top_p = uniform(gen, (b,), torch.float32, 0.3, 0.99)
    return (logits, temperature, top_p)


def flops(shape):
    b, v = shape["B"], shape["V"]
    return b * v * (8.0 + 2.0 * max(1, v.bit_length()))  # softmax, a sort (~log V compares), scan, mask


def nbytes_moved(shape, dtype):
    b, v = shape["B"], shape["V"]
    return float(2 * b * v * itemsize(dtype) + 8 * b)


TASK = Task(
    name="top_p_filter",
    category="fusion",
    description="top-p (nucleus) filter: z = logits / temperature; keep token i iff the softmax(z) mass of tokens with strictly larger logits is < top_p, else -inf; logits [B, V], per-row temperature and top_p [B]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"B": 16, "V": 1000}, "small"),
        # Odd row count and a vocabulary that is no multiple of a block size.
        Shape("awkward", {"B": 3, "V": 3001}, "awkward"),
        # A decode batch of 1024 requests over the Llama-3 vocabulary (128256): 501 MiB of float32 logits.
        Shape("large", {"B": 1024, "V": 128256}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        f"kept (mass of strictly larger logits < top_p - {MASS_WINDOW:g}, float64): finite, default dtype tolerance vs z = "
        f"logits/temperature; removed (mass > top_p + {MASS_WINDOW:g}): exactly -inf; within {MASS_WINDOW:g} of top_p either; no NaN")),
    flops=flops,
    bytes=nbytes_moved,
)
