import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randint, randn, uniform


def reference(q, k, mask, scale):
    # Half-precision inputs are multiplied and exponentiated in float32 (a fused kernel keeps the
    # scores in registers): rounding the logits to bfloat16 first would move a logit near 20 by up
    # to 0.06 (half an ulp) and its probability by 6%, three times bfloat16's tolerance.
    acc = torch.promote_types(q.dtype, torch.float32)
    s = torch.matmul(q.to(acc), k.to(acc).transpose(-1, -2)) * scale + mask.to(acc)
    return torch.softmax(s, dim=-1).to(q.dtype)


def make_inputs(shape, dtype, gen):
    b, h, sq, sk, d = shape["batch"], shape["heads"], shape["q_len"], shape["k_len"], shape["head_dim"]
    f32 = torch.float32
    # Per-head temperature (0.5..2.5): after the 1/sqrt(d) scale some heads are flat, some peaked.
    temp = randn(gen, (1, h, 1, 1), f32, scale=0.6).abs() + 0.5
    q = (randn(gen, (b, h, sq, d), f32, offset=0.1, outliers=1e-3, outlier_scale=6.0) * temp).to(dtype)
    k = randn(gen, (b, h, sk, d), dtype, offset=0.2, outliers=1e-3, outlier_scale=6.0)
    # Additive mask [B, 1, Sq, Sk] as an encoder builds it: a finite bias (relative-position /
    # segment bias in [-2, 0]) where the key is a real token, -inf on each sequence's right
    # padding (every sequence keeps at least one token, so no row is fully masked).
    lengths = randint(gen, (b,), 1, sk + 1)
    bias = uniform(gen, (b, 1, sq, sk), f32, -2.0, 0.0)
    keep = torch.arange(sk, device=gen.device).view(1, 1, 1, sk) < lengths.view(b, 1, 1, 1)
    mask = torch.where(keep, bias, torch.full_like(bias, float("-inf"))).to(dtype)
    return (q, k, mask, 1.0 / math.sqrt(d))


def flops(shape):
    b, h, sq, sk, d = shape["batch"], shape["heads"], shape["q_len"], shape["k_len"], shape["head_dim"]
    return 2.0 * b * h * sq * sk * d + 6.0 * b * h * sq * sk  # QK^T, then scale, mask, softmax


def nbytes_moved(shape, dtype):
    b, h, sq, sk, d = shape["batch"], shape["heads"], shape["q_len"], shape["k_len"], shape["head_dim"]
    return float(nbytes((b, h, sq, d), dtype) + nbytes((b, h, sk, d), dtype) + nbytes((b, 1, sq, sk), dtype)
                 + nbytes((b, h, sq, sk), dtype))


TASK = Task(
    name="attention_scores_softmax",
    category="fusion",
    description="attention probabilities P = softmax(Q K^T * scale + mask) per head, Q [B, H, Sq, D], K [B, H, Sk, D], "
                "additive mask [B, 1, Sq, Sk] (finite bias, -inf on padded keys) broadcast over heads; "
                "float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 2, "heads": 4, "q_len": 64, "k_len": 64, "head_dim": 64}, "small"),
        # One sequence, odd query and key lengths, 3 heads of width 80.
        Shape("awkward", {"batch": 1, "heads": 3, "q_len": 37, "k_len": 77, "head_dim": 80}, "awkward"),
        # BERT-large self-attention: 16 heads of width 64, batch 32 x 512 padded tokens.
        Shape("large", {"batch": 32, "heads": 16, "q_len": 512, "k_len": 512, "head_dim": 64}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
