"""Per-token log-probabilities of the sampled tokens, and the policy entropy, from LM logits: the
first step of a PPO/GRPO update (verl's logprobs_from_logits + entropy_from_logits, TRL's
selective_log_softmax), fused so the [N, V] log-softmax is never written.

  z       = logits / temperature                      (temperature > 0, a Python float)
  logp[n] = z[n, target[n]] - logsumexp(z[n, :])
  ent[n]  = -sum_v softmax(z[n])_v * log_softmax(z[n])_v
Both outputs are float32 [N] whatever the logits dtype (RL trainers compute these in float32 from
bfloat16 logits); the arithmetic is float32 or wider, without rounding z to the logits dtype.
Judged against the float64 computation from the same logits at the float32 tolerance.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, randint, randn


def reference(logits, target, temperature):
    compute = torch.promote_types(logits.dtype, torch.float32)
    z = logits.to(compute) / temperature
    logprobs = torch.log_softmax(z, dim=-1)
    logp = logprobs.gather(1, target.unsqueeze(1)).squeeze(1)
    entropy = -(logprobs.exp() * logprobs).sum(dim=-1)
    return logp, entropy


def make_inputs(shape, dtype, gen):
    n, v = shape["N"], shape["V"]
    # LM-like logits: a per-row offset (the softmax must be shift-invariant), a heavy upper tail
    # (a few strongly preferred tokens) and rows of different peakedness.
    row_offset = randn(gen, (n, 1), torch.float32, scale=5.0, offset=2.0)
    spread = torch.exp2(randn(gen, (n, 1), torch.float32, scale=0.5)) * 2.0
    logits = randn(gen, (n, v), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=6.0) * spread + row_offset
    # Sampled tokens: half of them the row's most likely token (log-prob near 0, where
    # z_t - logsumexp cancels), the rest uniform over the vocabulary (log-prob far below 0).
    uniform_target = randint(gen, (n,), 0, v)
    take_top = randint(gen, (n,), 0, 2).bool()
    target = torch.where(take_top, logits.argmax(dim=-1), uniform_target)
    return (logits.to(dtype), target, float(shape["temperature"]))


def flops(shape):
    return 8.0 * shape["N"] * shape["V"]  # scale, max, exp, sum, then the entropy's multiply-add


def nbytes_moved(shape, dtype):
    n, v = shape["N"], shape["V"]
    return float(n * v * itemsize(dtype) + n * 8 + 2 * n * 4)


TASK = Task(
    name="log_softmax_gather",
    category="fusion",
    description="RL policy log-probs: logp[n] = log_softmax(logits[n] / T)[target[n]] and entropy[n] of softmax(logits[n] / T), logits [N, V], int64 targets [N]; both float32 [N]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 64, "V": 1000, "temperature": 1.0}, "small"),
        # Odd sizes, one row longer than a block with a masked tail, temperature below 1.
        Shape("awkward", {"N": 33, "V": 3001, "temperature": 0.7}, "awkward"),
        # 2048 response tokens over the Llama-3 vocabulary (128256): 1 GiB of float32 logits read once.
        Shape("large", {"N": 2048, "V": 128256, "temperature": 0.6}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
