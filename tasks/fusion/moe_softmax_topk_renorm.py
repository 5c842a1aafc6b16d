"""DeepSeek-V2-style MoE routing: softmax, group-limited top-k, renormalised and scaled weights,
with ties that the contract resolves (moe_topk_routing is the plain Mixtral router on tie-free
logits; this one restricts experts to the best groups and has exact ties in every row).

Contract, written out:
  * inputs: logits [T, E] in the task dtype; n_group (E % n_group == 0), topk_group, k
    (k <= topk_group * E / n_group), routed_scaling_factor (Python ints / float)
  * probs = softmax(logits, -1) in float32 or wider (ranking on logits is equivalent: softmax is
    monotonic, and equal logits give equal probabilities)
  * group score = the largest prob among the group's E / n_group consecutive experts; the
    topk_group groups with the highest scores are kept (DeepSeek-V2's group_limited_greedy)
  * experts: the k highest-prob experts of the kept groups, in descending prob order
  * TIE RULE, for groups and experts alike: equal values rank by ascending index (the lower
    group / expert id wins a place and comes first); the inputs contain exact ties, many of
    them at the selection boundary
  * outputs: weights [T, k] in the task dtype = p / sum(p over the k) * routed_scaling_factor
    (default tolerances against float64); expert ids int64 [T, k], exact
Tie-safety of the inputs: apart from the deliberate exact ties, logits are >= 0.44 step apart
after rounding to bfloat16 (see make_inputs), so the ranking is the same in every precision.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, randint, uniform


def reference(logits, n_group, topk_group, k, routed_scaling_factor):
    t, e = logits.shape
    compute = torch.promote_types(logits.dtype, torch.float32)
    probs = torch.softmax(logits.to(compute), dim=-1)
    # stable descending sorts: equal values keep ascending index order (the tie rule).
    group_scores = probs.view(t, n_group, e // n_group).amax(dim=-1)
    groups = torch.sort(group_scores, dim=-1, descending=True, stable=True).indices[:, :topk_group]
    group_mask = torch.zeros_like(group_scores, dtype=torch.bool).scatter_(1, groups, True)
    expert_mask = group_mask.repeat_interleave(e // n_group, dim=1)
    masked = probs.masked_fill(~expert_mask, float("-inf"))
    top = torch.sort(masked, dim=-1, descending=True, stable=True)
    weights, experts = top.values[:, :k], top.indices[:, :k]
    weights = weights / weights.sum(dim=-1, keepdim=True) * routed_scaling_factor
    return weights.to(logits.dtype), experts


def make_inputs(shape, dtype, gen):
    t, e, k = shape["tokens"], shape["experts"], shape["k"]
    # Tie-free base, as in moe_topk_routing: a random permutation of the ranks 0..E-1 per row,
    # each jittered by [0, 0.25), centred, times a per-row power of two 2^j / 16 (j in 0..3, exact
    # in every dtype). Distinct values are >= 0.75 step apart; rounding to bfloat16 moves a value
    # (|value| <= E/2 = 80 steps) by at most 80 * 2^-9 = 0.16 step, so they stay >= 0.44 step
    # (>= 1/36) apart and their probabilities differ by >= 2.8%, more than bfloat16's 0.8% spacing.
    ranks = torch.argsort(uniform(gen, (t, e), torch.float32, 0.0, 1.0), dim=-1).to(torch.float32)
    jitter = uniform(gen, (t, e), torch.float32, 0.0, 0.25)
    step = torch.exp2(randint(gen, (t, 1), 0, 4).to(torch.float32)) / 16.0
    logits = (ranks - e / 2 + jitter) * step
    # Exact ties where they matter: k // 2 + 1 times per row, one of the row's 2k best values is
    # copied over a random expert (possibly in another group, making group scores tie too).
    best = torch.argsort(logits, dim=-1, descending=True)[:, :2 * k]
    rows = torch.arange(t, device=gen.device)
    for _ in range(k // 2 + 1):
        src = best.gather(1, randint(gen, (t, 1), 0, 2 * k)).squeeze(1)
        dst = randint(gen, (t,), 0, e)
        logits[rows, dst] = logits[rows, src]
    return (logits.to(dtype), shape["n_group"], shape["topk_group"], k, float(shape["scale"]))


def flops(shape):
    t, e, k = shape["tokens"], shape["experts"], shape["k"]
    return 6.0 * t * e + 3.0 * t * k  # softmax, group maxima and selection compares, renormalisation


def nbytes_moved(shape, dtype):
    t, e, k = shape["tokens"], shape["experts"], shape["k"]
    return float(t * e * itemsize(dtype) + t * k * (itemsize(dtype) + itemsize(torch.int64)))


TASK = Task(
    name="moe_softmax_topk_renorm",
    category="fusion",
    description="DeepSeek-V2 group-limited MoE router: softmax(logits [T, E]), keep the topk_group groups with the best max prob, top-k experts among them, weights renormalised x routed_scaling_factor; int64 ids exact with ties to the lower index",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        # DeepSeek-V2's group structure scaled down: 64 experts in 8 groups, 3 groups kept, top-6.
        Shape("small", {"tokens": 64, "experts": 64, "n_group": 8, "topk_group": 3, "k": 6, "scale": 2.5}, "small"),
        # Odd sizes: 21 experts in 3 groups of 7, 2 groups kept, top-5, over an odd token count.
        Shape("awkward", {"tokens": 37, "experts": 21, "n_group": 3, "topk_group": 2, "k": 5, "scale": 1.0}, "awkward"),
        # DeepSeek-V2: 160 experts in 8 groups, 3 kept, top-6, routed_scaling_factor 16, over 2^20 tokens.
        Shape("large", {"tokens": 1 << 20, "experts": 160, "n_group": 8, "topk_group": 3, "k": 6, "scale": 16.0}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
