"""Fused output projection and cross entropy (Liger's fused linear cross entropy, Apple's Cut
Cross-Entropy): the [N, V] logits never need to exist in memory.

Contract: loss[i] = logsumexp_v(z[i, v]) - z[i, target[i]] with z = h @ W^T, computed from the
task-dtype inputs; rows whose target is -100 (ignore_index) give exactly 0. The loss has the
dtype of h; judged element-wise against a float64 reference.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose
from mkbench.taskkit import nbytes, randint, randn, uniform

IGNORE_INDEX = -100

# float32 atol, derived: each logit carries a float32 accumulation error of about u * sqrt(K) * |h|
# |w| (u = 2^-24; as for tasks/matmul/matmul.py, where the default bound 1e-5 x rms is reached at
# K = 8192), and the loss inherits the target logit's error plus the softmax-weighted average of
# the others'. Losses are O(10) (rms ~12), so the default atol (1e-5 x rms, ~1.2e-4) already
# leaves room at K = 4096 (on CPU, torch float32 over 64 rows of the large shape reached max
# |err| = 0.05e-5 x rms, 0.007x the bound, while bfloat16 operands overshoot it 32x). The default
# is kept.
TOLERANCES = DEFAULT_TOLERANCES


def reference(h, weight, target):
    acc = torch.promote_types(h.dtype, torch.float32)
    logits = torch.nn.functional.linear(h, weight)
    loss = torch.nn.functional.cross_entropy(logits.to(acc), target, ignore_index=IGNORE_INDEX, reduction="none")
    return loss.to(h.dtype)


def make_inputs(shape, dtype, gen):
    n, k, v = shape["N"], shape["K"], shape["V"]
    f32 = torch.float32
    # Per-token confidence: hidden-state scales of 0.3..3 give flat and sharply peaked rows.
    row_scale = uniform(gen, (n, 1), f32, 0.3, 3.0)
    h = (randn(gen, (n, k), f32, offset=0.05, outliers=1e-3, outlier_scale=8.0) * row_scale).to(dtype)
    # Logit rms ~2.5 x the row scale; a per-vocabulary-row offset gives frequent and rare tokens.
    w_off = randn(gen, (v, 1), f32, scale=0.5 * k ** -0.5)
    weight = (randn(gen, (v, k), f32, scale=2.5 * k ** -0.5, outliers=1e-3, outlier_scale=6.0) + w_off).to(dtype)
    target = randint(gen, (n,), 0, v)
    # About 5% of the positions are padding (ignore_index).
    target = torch.where(uniform(gen, (n,), f32, 0.0, 1.0) < 0.05, torch.full_like(target, IGNORE_INDEX), target)
    return (h, weight, target)


def flops(shape):
    n, k, v = shape["N"], shape["K"], shape["V"]
    return 2.0 * n * v * k + 4.0 * n * v  # GEMM; max, subtract + exp, sum


def nbytes_moved(shape, dtype):
    n, k, v = shape["N"], shape["K"], shape["V"]
    return float(nbytes((n, k), dtype) + nbytes((v, k), dtype) + nbytes((n,), torch.int64) + nbytes((n,), dtype))


TASK = Task(
    name="linear_cross_entropy",
    category="fusion",
    description="fused LM-head + cross entropy: loss[i] = logsumexp(h_i @ W^T) - (h_i @ W^T)[target_i], h [N, K], "
                "W [V, K], int64 targets with ignore_index -100 (loss 0), reduction='none'; the [N, V] logits need "
                "not be materialised; float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 64, "K": 128, "V": 1000}, "small"),
        # Odd token count, hidden size and vocabulary.
        Shape("awkward", {"N": 33, "K": 257, "V": 3001}, "awkward"),
        # Llama-3-8B: hidden 4096, vocabulary 128256, 4096 tokens.
        Shape("large", {"N": 4096, "K": 4096, "V": 128256}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
