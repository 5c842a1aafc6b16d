import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(scores, scale):
    # scores [B, H, Sq, Sk] with Sq <= Sk: the queries are the last Sq positions of the sequence
    # (bottom-right aligned, as in chunked prefill), so query i sees keys j <= i + Sk - Sq.
    # Half-precision scores are scaled and exponentiated in float32 (as a fused kernel does):
    # rounding scores * scale to bfloat16 first moves a logit near 20 by up to 0.06 (half an
    # ulp), and with it its probability by 6%, three times bfloat16's tolerance (measured on 8
    # heads of the large shape: 2.2x the bound, against 0.18x when the product stays in float32).
    acc = torch.promote_types(scores.dtype, torch.float32)
    sq, sk = scores.shape[-2], scores.shape[-1]
    i = torch.arange(sq, device=scores.device).view(sq, 1)
    j = torch.arange(sk, device=scores.device).view(1, sk)
    z = (scores.to(acc) * scale).masked_fill(j > i + (sk - sq), float("-inf"))
    return torch.softmax(z, dim=-1).to(scores.dtype)


def make_inputs(shape, dtype, gen):
    b, h, sq, sk, d = shape["batch"], shape["heads"], shape["q_len"], shape["k_len"], shape["head_dim"]
    # Raw q.k products of a head of width d: std ~ sqrt(d) times a per-head temperature
    # (0.5..2.5), so after the 1/sqrt(d) scale some heads are flat and some peaked; a few
    # outliers (attention sinks) dominate their rows.
    temp = randn(gen, (1, h, 1, 1), torch.float32, scale=0.6).abs() + 0.5
    raw = randn(gen, (b, h, sq, sk), torch.float32, scale=math.sqrt(d), offset=0.3 * math.sqrt(d),
                outliers=1e-3, outlier_scale=4.0) * temp
    return (raw.to(dtype), 1.0 / math.sqrt(d))


def flops(shape):
    b, h, sq, sk = shape["batch"], shape["heads"], shape["q_len"], shape["k_len"]
    visible = sq * (sk - sq) + sq * (sq + 1) // 2
    return 5.0 * b * h * visible  # scale, max, subtract + exp, sum, normalise over the visible keys


def nbytes_moved(shape, dtype):
    b, h, sq, sk = shape["batch"], shape["heads"], shape["q_len"], shape["k_len"]
    # Only the visible scores need to be read (query i sees i + Sk - Sq + 1 keys); every output,
    # the zeros included, is written.
    visible = sq * (sk - sq) + sq * (sq + 1) // 2
    return float(nbytes((b, h, visible), dtype) + nbytes((b, h, sq, sk), dtype))


TASK = Task(
    name="causal_scaled_softmax",
    category="fusion",
    description="p = softmax(scores * scale with keys j > i + Sk - Sq masked to -inf) over the last dim of attention "
                "scores [B, H, Sq, Sk] (Sq <= Sk, queries bottom-right aligned); masked probabilities are exactly 0",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 2, "heads": 4, "q_len": 64, "k_len": 64, "head_dim": 64}, "small"),
        # A chunk of 37 queries against 77 keys (a prefill continuing a cached prefix), one batch
        # entry, 3 heads of width 80: rows end inside a block and the mask starts mid-block.
        Shape("awkward", {"batch": 1, "heads": 3, "q_len": 37, "k_len": 77, "head_dim": 80}, "awkward"),
        # Llama-2-7B prefill scores: 32 heads of width 128 over 1024 tokens, batch 4.
        Shape("large", {"batch": 4, "heads": 32, "q_len": 1024, "k_len": 1024, "head_dim": 128}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
