"""KL divergence per row, as in distillation: out[n] = sum_v p[n, v] (log p[n, v] - log_q[n, v]),
i.e. F.kl_div(log_q, p, reduction='none', log_target=False).sum(-1) -> [N] (one value per token;
'batchmean' would divide the total by N).

Contract: the default allclose against the float64 computation on the same (rounded) inputs;
half-precision inputs are accumulated in float32 and the result rounded once. Terms with
p = 0 contribute 0 (0 log 0 = 0), and 20% of p is exactly 0: computing p * log(p) literally
gives NaN there. Summation-length budget: terms have mixed signs with sum |terms| about 1.5x the
row's KL on average (KL from ~0.002 to ~2 per row), so a float32 sum over V terms has a typical
error of sqrt(V) u * 1.5 relative (1.6e-5 at V = 32000) and a tree-order worst case of
log2(V) u * 1.5 (1.3e-6), both inside rtol 1e-4; rows with a small KL, where the ratio is larger,
are covered by atol (1e-5 x rms, rms ~0.7). Only a strictly sequential order over 32000 terms
could reach its worst case (V u * 1.5 = 3e-3).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform


def reference(log_q, p):
    wide = torch.promote_types(log_q.dtype, torch.float32)
    kl = torch.nn.functional.kl_div(log_q.to(wide), p.to(wide), reduction="none", log_target=False).sum(dim=-1)
    return kl.to(log_q.dtype)


def make_inputs(shape, dtype, gen):
    n, v = shape["N"], shape["V"]
    # Student log-probabilities and teacher probabilities over the same vocabulary, the teacher a
    # perturbation of the student (KL ~ 0.1 .. 1), with 20% of the teacher's entries exactly 0
    # (top-k / masked distillation) and the rest renormalised.
    z_q = randn(gen, (n, v), torch.float32, scale=2.0, outliers=1e-3, outlier_scale=4.0)
    z_p = z_q + randn(gen, (n, v), torch.float32, scale=1.0) * uniform(gen, (n, 1), torch.float32, 0.3, 1.5)
    keep = uniform(gen, (n, v), torch.float32, 0.0, 1.0) >= 0.2
    p = torch.softmax(z_p.double().masked_fill(~keep, float("-inf")), dim=-1)
    log_q = torch.log_softmax(z_q.double(), dim=-1)
    return (log_q.to(dtype), p.to(dtype))


def flops(shape):
    return 4.0 * shape["N"] * shape["V"]


def nbytes_moved(shape, dtype):
    n, v = shape["N"], shape["V"]
    return float(2 * nbytes((n, v), dtype) + nbytes((n,), dtype))


TASK = Task(
    name="kl_div",
    category="loss",
    description="per-row KL divergence sum_v p (log p - log_q) of log_q, p [N, V] -> [N] (reduction: sum over V per row), p with exact zeros",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 64, "V": 1000}, "small"),
        Shape("awkward", {"N": 33, "V": 3001}, "awkward"),
        # Distillation over Llama-2's 32000-token vocabulary, 4096 tokens.
        Shape("large", {"N": 4096, "V": 32000}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
