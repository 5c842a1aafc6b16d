import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import attention_working_bytes, nbytes, randn

# float32 atol, derived as for tasks/fusion/sdpa_causal.py: softmax weights carry a relative error
# of about u * |z| from exp() (u = 2^-24) and the P V sum over up to S keys adds u * sqrt(S), so
# near-zero outputs are judged by atol alone; for causal attention torch's float32 reference and
# an emulated flash kernel reached 0.44x the default bound (1e-5 x rms) at S = 4096 on CPU, and a
# GPU exp (ex2.approx) and more heads push the tail towards it. The ALiBi bias only sharpens the
# distributions (fewer keys matter). atol is 5e-5 x rms; bfloat16 operands, P or outputs
# (relative error 2^-9) and TF32 logits still fail. rtol stays 1e-4; half precisions keep their
# defaults.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def alibi_slopes(n):
    """The ALiBi paper's head slopes: a geometric sequence starting at 2^(-8/n) for n a power of
    two; otherwise those of the next lower power of two, then every other slope of the next
    higher one (Press et al., 2022; BLOOM and MPT use the same)."""
    def power_of_2(m):
        start = 2.0 ** (-(2.0 ** -(math.log2(m) - 3)))
        return [start * start ** i for i in range(m)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][: n - closest]


def reference(q, k, v, slopes, scale):
    # q, k, v [B, H, S, D]; slopes [H]. Logit of query i and key j <= i:
    # q_i . k_j * scale + slopes[h] * (j - i); keys j > i are masked (causal).
    acc = torch.promote_types(q.dtype, torch.float32)
    s_len = q.shape[-2]
    pos = torch.arange(s_len, device=q.device)
    rel = (pos.view(1, s_len) - pos.view(s_len, 1)).to(acc)  # j - i
    bias = slopes.to(acc).view(-1, 1, 1) * rel  # [H, S, S]
    s = torch.matmul(q.to(acc), k.to(acc).transpose(-1, -2)) * scale + bias
    p = torch.softmax(s.masked_fill(rel > 0, float("-inf")), dim=-1)
    return torch.matmul(p, v.to(acc)).to(q.dtype)


def make_inputs(shape, dtype, gen):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    f32 = torch.float32
    q = randn(gen, (b, h, s, d), dtype, offset=0.1, outliers=1e-3, outlier_scale=6.0)
    k = randn(gen, (b, h, s, d), dtype, offset=0.2, outliers=1e-3, outlier_scale=6.0)
    v = randn(gen, (b, h, s, d), dtype, offset=0.3, outliers=1e-3, outlier_scale=10.0)
    # The model's fixed slopes (2^(-8/H) down to 2^-8 for H a power of two: heads that see a few
    # keys and heads that see the whole context), rounded to the task dtype as the model stores them.
    slopes = torch.tensor(alibi_slopes(h), dtype=f32, device=gen.device).to(dtype)
    return (q, k, v, slopes, 1.0 / math.sqrt(d))


def flops(shape):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    pairs = s * (s + 1) / 2  # (query, key) pairs under the causal mask
    return b * h * pairs * (4.0 * d + 7.0)  # QK^T and PV (2d each), bias, softmax


def nbytes_moved(shape, dtype):
    b, h, s, d = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"]
    return float(4 * nbytes((b, h, s, d), dtype) + nbytes((h,), dtype))


def working_bytes(shape, dtype):
    # The whole batch's [B, H, S, S] scores (and the bias beside them), several of them at once
    return attention_working_bytes(shape["batch"] * shape["heads"] * shape["seq"] ** 2, dtype)


TASK = Task(
    name="attention_alibi",
    category="fusion",
    description="causal attention with ALiBi: O = softmax(Q K^T * scale + slopes[h] * (j - i), keys j > i masked) V, "
                "Q/K/V/O [B, H, S, D], per-head slopes [H] (the ALiBi paper's geometric slopes); "
                "float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 2, "heads": 8, "seq": 64, "head_dim": 64}, "small"),
        # 12 heads (not a power of two: the interleaved slope rule), odd length, width 80.
        Shape("awkward", {"batch": 1, "heads": 12, "seq": 77, "head_dim": 80}, "awkward"),
        # BLOOM-7b1 / MPT-7B: 32 heads of width 128, 4 x 2048 tokens.
        Shape("large", {"batch": 4, "heads": 32, "seq": 2048, "head_dim": 128}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
    working_bytes=working_bytes,
)
