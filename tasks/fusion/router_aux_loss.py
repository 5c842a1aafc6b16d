"""The MoE load-balancing auxiliary loss of Switch Transformer / Mixtral
(transformers' load_balancing_loss_func), with the padding mask, fused into one pass over the
router logits.

Contract, written out:
  * inputs: router logits [T, E] in the task dtype, valid bool [T] (False = padding token,
    excluded everywhere), k (int, experts per token)
  * probs = softmax(logits, -1) in float32 or wider; each valid token's top-k experts by prob
    (equivalently by logit); the logits are tie-free by construction (see make_inputs)
  * tokens_per_expert: int64 [E], the number of (valid token, slot) pairs routed to each
    expert; exact
  * router_prob: [E] in the task dtype, P_e = mean over valid tokens of probs[:, e]
  * loss: 0-d in the task dtype, E * sum_e (tokens_per_expert[e] / n_valid) * P_e (= k for a
    perfectly balanced router; Mixtral's formula, where f_e sums its top-k slots)
  * floats: default tolerances against float64 (one rounding to the dtype at the end)
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, randint, uniform


def reference(logits, valid, k):
    e = logits.shape[-1]
    compute = torch.promote_types(logits.dtype, torch.float32)
    probs = torch.softmax(logits.to(compute), dim=-1)[valid]
    experts = torch.topk(probs, k, dim=-1).indices
    counts = torch.bincount(experts.flatten(), minlength=e)
    router_prob = probs.mean(dim=0)
    loss = e * (counts.to(compute) / probs.shape[0] * router_prob).sum()
    return loss.to(logits.dtype), counts, router_prob.to(logits.dtype)


def make_inputs(shape, dtype, gen):
    t, e = shape["tokens"], shape["experts"]
    # Tie-free rows, built as in moe_topk_routing: a random permutation of the ranks 0..E-1 each
    # jittered by [0, 0.25), centred, times a per-row power of two 2^j / 16 (j in 0..3, exact in
    # every dtype). Neighbouring logits stay >= 0.5 step apart after rounding to bfloat16, so the
    # top-k set is the same for float64, for bfloat16 logits and for probabilities rounded to
    # bfloat16, and the exact expert counts are well defined.
    ranks = torch.argsort(uniform(gen, (t, e), torch.float32, 0.0, 1.0), dim=-1).to(torch.float32)
    jitter = uniform(gen, (t, e), torch.float32, 0.0, 0.25)
    step = torch.exp2(randint(gen, (t, 1), 0, 4).to(torch.float32)) / 16.0
    # Router imbalance: a per-expert bias of up to 3 ranks moves popular experts up in most rows;
    # re-ranking rank + bias (+ jitter, which breaks equal sums) keeps the ranks 0..E-1.
    bias = uniform(gen, (1, e), torch.float32, 0.0, 3.0)
    ranks = torch.argsort(torch.argsort(ranks + bias + jitter, dim=-1), dim=-1).to(torch.float32)
    logits = (ranks - e / 2 + jitter) * step
    # About 1 token in 8 is padding; at least one of each kind.
    valid = randint(gen, (t,), 0, 8) != 0
    valid[0], valid[-1] = False, True
    return (logits.to(dtype), valid, shape["k"])


def flops(shape):
    t, e, k = shape["tokens"], shape["experts"], shape["k"]
    return 6.0 * t * e + 2.0 * t * k  # softmax, top-k compares, the prob sums; counts


def nbytes_moved(shape, dtype):
    t, e = shape["tokens"], shape["experts"]
    return float(t * e * itemsize(dtype) + t + e * (8 + itemsize(dtype)) + itemsize(dtype))


TASK = Task(
    name="router_aux_loss",
    category="fusion",
    description="Switch/Mixtral MoE load-balancing loss over router logits [T, E] with a padding mask: loss = E * sum_e f_e P_e (f_e = top-k routed fraction, P_e = mean router prob); returns (loss, int64 tokens_per_expert [E], router_prob [E])",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        # Mixtral: 8 experts, top-2.
        Shape("small", {"tokens": 64, "experts": 8, "k": 2}, "small"),
        # Qwen1.5-MoE: 60 experts (not a power of two), top-4, over an odd token count.
        Shape("awkward", {"tokens": 37, "experts": 60, "k": 4}, "awkward"),
        # Qwen3-MoE: 128 experts, top-8, over 2^20 tokens: 512 MiB of float32 logits read once.
        Shape("large", {"tokens": 1 << 20, "experts": 128, "k": 8}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
