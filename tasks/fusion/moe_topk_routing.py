import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, randint, uniform

# Ties. The expert indices are compared exactly, so the top-k set and its order must be unambiguous
# at every dtype, candidate precision included. Continuous float32 logits would make ties improbable,
# but bfloat16 (8-bit significand) logits collide often among 60-128 experts, and softmax
# probabilities rounded to bfloat16 collide even more. So each row is built with no ties by
# construction: a random permutation of the ranks 0..E-1, each jittered by u in [0, 0.25),
# shifted to centre on 0 and scaled by a per-row power of two 2^j / 16 (j in 0..3, exact in every
# dtype; it varies how peaked a row's distribution is). Neighbouring ranks stay at least 0.75
# steps apart; rounding to bfloat16 moves a value by at most 1/8 step (|value| < 64 steps), so
# logits stay >= 0.5 step >= 1/32 apart and neighbouring probabilities differ by >= 3%, far more
# than bfloat16's 0.8% relative spacing: top-k order is the same for a float64 reference, for
# softmax probabilities rounded to bfloat16 and for top-k taken on the logits directly.


def reference(logits, k):
    probs = torch.softmax(logits, dim=-1)
    weights, experts = torch.topk(probs, k, dim=-1)  # sorted: largest weight first
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights, experts


def make_inputs(shape, dtype, gen):
    t, e = shape["tokens"], shape["experts"]
    ranks = torch.argsort(torch.rand((t, e), generator=gen, device=gen.device), dim=-1).to(torch.float32)
    jitter = uniform(gen, (t, e), torch.float32, 0.0, 0.25)
    step = torch.exp2(randint(gen, (t, 1), 0, 4).to(torch.float32)) / 16.0
    logits = ((ranks - e / 2 + jitter) * step).to(dtype)
    return (logits, shape["k"])


def flops(shape):
    t, e, k = shape["tokens"], shape["experts"], shape["k"]
    return 5.0 * t * e + 3.0 * t * k  # softmax, selection compares, renormalisation


def nbytes_moved(shape, dtype):
    t, e, k = shape["tokens"], shape["experts"], shape["k"]
    return float(t * e * itemsize(dtype) + t * k * (itemsize(dtype) + itemsize(torch.int64)))


TASK = Task(
    name="moe_topk_routing",
    category="fusion",
    description="MoE router: probs = softmax(logits [T, E]); the k largest per token (descending) renormalised to sum to 1, plus their int64 expert indices (compared exactly; logits are tie-free by construction)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        # Mixtral: 8 experts, top-2.
        Shape("small", {"tokens": 64, "experts": 8, "k": 2}, "small"),
        # Qwen1.5-MoE: 60 experts (not a power of two), top-4, over an odd token count.
        Shape("awkward", {"tokens": 37, "experts": 60, "k": 4}, "awkward"),
        # Qwen3-MoE: 128 experts, top-8, over 2^20 tokens.
        Shape("large", {"tokens": 1 << 20, "experts": 128, "k": 8}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
