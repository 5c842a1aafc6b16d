"""Label-smoothed cross entropy per row, with ignored (padding) targets: what
F.cross_entropy(logits, target, reduction="none", label_smoothing=eps, ignore_index=-100) returns.

  logp    = log_softmax(logits[n])                     (float32 or wider)
  loss[n] = (1 - eps) * -logp[target[n]] + (eps / V) * sum_v -logp[v]
  loss[n] = 0 where target[n] == -100
Output in the logits dtype [N] (one rounding at the end). Judged against float64 at the dtype's
default tolerance.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, randint, randn

IGNORE_INDEX = -100


def reference(logits, target, label_smoothing):
    compute = torch.promote_types(logits.dtype, torch.float32)
    loss = torch.nn.functional.cross_entropy(logits.to(compute), target, reduction="none",
                                             label_smoothing=label_smoothing, ignore_index=IGNORE_INDEX)
    return loss.to(logits.dtype)


def make_inputs(shape, dtype, gen):
    n, v = shape["N"], shape["V"]
    # LM-like logits with per-row offsets and spreads; the smoothing term averages -logp over the
    # whole row, so the tail of the distribution matters as much as its peak.
    row_offset = randn(gen, (n, 1), torch.float32, scale=5.0, offset=2.0)
    spread = torch.exp2(randn(gen, (n, 1), torch.float32, scale=0.5)) * 2.0
    logits = randn(gen, (n, v), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=6.0) * spread + row_offset
    target = randint(gen, (n,), 0, v)
    # About 1 in 8 rows is padding (ignored); at least one, and never all.
    ignored = randint(gen, (n,), 0, 8) == 0
    ignored[0] = True
    ignored[-1] = False
    target = torch.where(ignored, torch.full_like(target, IGNORE_INDEX), target)
    return (logits.to(dtype), target, float(shape["smoothing"]))


def flops(shape):
    return 7.0 * shape["N"] * shape["V"]  # max, exp, sum, log-prob sum for the smoothing term


def nbytes_moved(shape, dtype):
    n, v = shape["N"], shape["V"]
    return float(n * v * itemsize(dtype) + n * 8 + n * itemsize(dtype))


TASK = Task(
    name="softmax_cross_entropy_smoothing",
    category="fusion",
    description="per-row label-smoothed cross entropy (smoothing eps, ignore_index -100 -> 0) of logits [N, V] against int64 targets [N]; loss [N] in the logits dtype",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 64, "V": 1000, "smoothing": 0.1}, "small"),
        Shape("awkward", {"N": 33, "V": 3001, "smoothing": 0.05}, "awkward"),
        # 1024 tokens over the Llama-3 vocabulary (128256): 501 MiB of float32 logits read once.
        Shape("large", {"N": 1024, "V": 128256, "smoothing": 0.1}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
