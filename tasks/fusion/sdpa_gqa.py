import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import nbytes, randn

# float32 atol, derived as for tasks/fusion/sdpa_causal.py: softmax weights carry a relative error
# of about u * |z| from exp() of logits of magnitude up to ~35 (u = 2^-24) and the P V sum over Sk
# keys adds u * sqrt(Sk), so near-zero outputs are judged by atol alone; torch's float32 reference
# and an emulated flash kernel reached 0.44x the default bound (1e-5 x rms) at 4096 keys on CPU,
# and a GPU exp (ex2.approx) and more heads push the tail towards it. atol is 5e-5 x rms; bfloat16
# operands, P or outputs (relative error 2^-9) and TF32 logits still fail. rtol stays 1e-4; half
# precisions keep their defaults.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(q, k, v, scale):
    # q [B, Hq, Sq, D]; k, v [B, Hkv, Sk, D]; query head h reads KV head h // (Hq / Hkv).
    # Scores, softmax and P V in (at least) float32; the output is rounded once. One batch entry
    # at a time: the [Hq, Sq, Sk] scores of the large shape take 4.3 GB in float64.
    acc = torch.promote_types(q.dtype, torch.float32)
    b, hq, sq, d = q.shape
    hkv = k.shape[1]
    g = hq // hkv
    out = []
    for i in range(b):
        qg = q[i].to(acc).reshape(hkv, g * sq, d)  # the G query heads of a group share K and V
        s = torch.matmul(qg, k[i].to(acc).transpose(-1, -2)) * scale
        p = torch.softmax(s, dim=-1)
        out.append(torch.matmul(p, v[i].to(acc)).reshape(hq, sq, d).to(q.dtype))
    return torch.stack(out)


def make_inputs(shape, dtype, gen):
    b, hq, hkv = shape["batch"], shape["q_heads"], shape["kv_heads"]
    sq, sk, d = shape["q_len"], shape["k_len"], shape["head_dim"]
    f32 = torch.float32
    # Per-query-head temperature (0.5..2.5): heads of one group attend differently to shared keys.
    temp = randn(gen, (1, hq, 1, 1), f32, scale=0.6).abs() + 0.5
    q = (randn(gen, (b, hq, sq, d), f32, offset=0.1, outliers=1e-3, outlier_scale=6.0) * temp).to(dtype)
    # A per-KV-head key offset: the groups see differently shaped distributions.
    k_off = randn(gen, (1, hkv, 1, d), f32, scale=0.3)
    k = (randn(gen, (b, hkv, sk, d), f32, outliers=1e-3, outlier_scale=6.0) + k_off).to(dtype)
    v = randn(gen, (b, hkv, sk, d), dtype, offset=0.3, outliers=1e-3, outlier_scale=10.0)
    return (q, k, v, 1.0 / math.sqrt(d))


def flops(shape):
    b, hq, sq, sk, d = shape["batch"], shape["q_heads"], shape["q_len"], shape["k_len"], shape["head_dim"]
    return b * hq * sq * sk * (4.0 * d + 5.0)  # QK^T and PV (2d each), softmax


def nbytes_moved(shape, dtype):
    b, hq, hkv = shape["batch"], shape["q_heads"], shape["kv_heads"]
    sq, sk, d = shape["q_len"], shape["k_len"], shape["head_dim"]
    return float(2 * nbytes((b, hq, sq, d), dtype) + 2 * nbytes((b, hkv, sk, d), dtype))


TASK = Task(
    name="sdpa_gqa",
    category="fusion",
    description="grouped-query attention, non-causal: O = softmax(Q K^T * scale) V where query head h uses KV head "
                "h // (Hq / Hkv); Q/O [B, Hq, Sq, D], K/V [B, Hkv, Sk, D]; float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 2, "q_heads": 8, "kv_heads": 2, "q_len": 64, "k_len": 64, "head_dim": 64}, "small"),
        # Multi-query attention (one KV head for 5 query heads), 33 queries against 77 keys, width 80.
        Shape("awkward", {"batch": 1, "q_heads": 5, "kv_heads": 1, "q_len": 33, "k_len": 77, "head_dim": 80}, "awkward"),
        # Llama-3-8B head layout (32 query heads, 8 KV heads, width 128), bidirectional over
        # 4 x 4096 tokens.
        Shape("large", {"batch": 4, "q_heads": 32, "kv_heads": 8, "q_len": 4096, "k_len": 4096, "head_dim": 128}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
