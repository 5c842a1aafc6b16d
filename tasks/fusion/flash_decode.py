"""Decode-step attention against a KV cache with per-sequence lengths (flash-decoding / paged
attention's job, here with a contiguous cache).

Contract: o[b, h] = softmax(q[b, h] . k_cache[b, h // G, :L_b]^T * scale) v_cache[b, h // G, :L_b]
with G = H / Hkv and L_b = seq_lens[b] (1 <= L_b <= Smax). Cache rows at positions >= L_b hold
stale data from other sequences (large finite values) and must not influence the output. Judged
element-wise against a float64 reference.
"""

import math

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import nbytes, randn

# float32 atol, derived as for tasks/fusion/sdpa_causal.py: softmax weights carry a relative error
# of about u * |z| from exp() (u = 2^-24) and the P V sum over up to Smax keys (split across
# programs and merged through their log-sum-exps in a flash-decoding kernel) adds u * sqrt(L) and
# a rounding per merge, so near-zero outputs are judged by atol alone; causal attention reached
# 0.44x the default bound (1e-5 x rms) at 4096 keys on CPU. atol is 5e-5 x rms; bfloat16
# operands, P or outputs (relative error 2^-9) and TF32 logits still fail. rtol stays 1e-4; half
# precisions keep their defaults.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(q, k_cache, v_cache, seq_lens, scale):
    # q [B, H, D]; k_cache, v_cache [B, Hkv, Smax, D]; seq_lens [B] int32.
    acc = torch.promote_types(q.dtype, torch.float32)
    b, h, d = q.shape
    hkv, smax = k_cache.shape[1], k_cache.shape[2]
    qg = q.to(acc).view(b, hkv, h // hkv, d)  # the query heads sharing a KV head
    s = torch.matmul(qg, k_cache.to(acc).transpose(-1, -2)) * scale  # [B, Hkv, G, Smax]
    valid = torch.arange(smax, device=q.device).view(1, smax) < seq_lens.view(b, 1).to(torch.int64)
    p = torch.softmax(s.masked_fill(~valid.view(b, 1, 1, smax), float("-inf")), dim=-1)
    return torch.matmul(p, v_cache.to(acc)).reshape(b, h, d).to(q.dtype)


def _lengths(batch, smax):
    """The multiset of sequence lengths: evenly spread over 1 .. Smax (so both extremes occur and
    the total, which sets the bytes to read, is fixed); make_inputs shuffles them."""
    return torch.linspace(1, smax, batch, dtype=torch.float64).round().to(torch.int64)


def make_inputs(shape, dtype, gen):
    b, h, hkv, smax, d = shape["batch"], shape["heads"], shape["kv_heads"], shape["max_len"], shape["head_dim"]
    f32 = torch.float32
    temp = randn(gen, (1, h, 1), f32, scale=0.6).abs() + 0.5
    q = (randn(gen, (b, h, d), f32, offset=0.1, outliers=1e-3, outlier_scale=6.0) * temp).to(dtype)
    k = randn(gen, (b, hkv, smax, d), f32, offset=0.2, outliers=1e-3, outlier_scale=6.0)
    v = randn(gen, (b, hkv, smax, d), f32, offset=0.3, outliers=1e-3, outlier_scale=10.0)
    lens = _lengths(b, smax).to(gen.device)[torch.randperm(b, generator=gen, device=gen.device)]
    # Stale rows past each sequence's end: 30x larger keys and values (finite in every dtype).
    # Read by mistake, they dominate the softmax and the output.
    stale = torch.arange(smax, device=gen.device).view(1, 1, smax, 1) >= lens.view(b, 1, 1, 1)
    junk_k = randn(gen, (b, hkv, smax, d), f32, scale=30.0, offset=5.0)
    junk_v = randn(gen, (b, hkv, smax, d), f32, scale=30.0, offset=-5.0)
    k_cache = torch.where(stale, junk_k, k).to(dtype)
    v_cache = torch.where(stale, junk_v, v).to(dtype)
    return (q, k_cache, v_cache, lens.to(torch.int32), 1.0 / math.sqrt(d))


def flops(shape):
    b, h, smax, d = shape["batch"], shape["heads"], shape["max_len"], shape["head_dim"]
    keys = float(_lengths(b, smax).sum())  # summed over the batch
    return h * keys * (4.0 * d + 5.0)  # q.k and p v (2d each), softmax


def nbytes_moved(shape, dtype):
    b, h, hkv, smax, d = shape["batch"], shape["heads"], shape["kv_heads"], shape["max_len"], shape["head_dim"]
    keys = int(_lengths(b, smax).sum())
    # q read and o written; only the first L_b rows of each sequence's K and V are read.
    return float(2 * nbytes((b, h, d), dtype) + 2 * nbytes((keys, hkv, d), dtype) + nbytes((b,), torch.int32))


TASK = Task(
    name="flash_decode",
    category="fusion",
    description="decode attention: one query token per sequence, q [B, H, D], against KV caches [B, Hkv, Smax, D] "
                "(grouped-query) up to per-sequence lengths seq_lens [B]; rows past a sequence's length are stale "
                "and must be ignored; float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 4, "heads": 8, "kv_heads": 2, "max_len": 128, "head_dim": 64}, "small"),
        # Lengths 1, 39 and 77; multi-query (one KV head for 5 query heads), width 80.
        Shape("awkward", {"batch": 3, "heads": 5, "kv_heads": 1, "max_len": 77, "head_dim": 80}, "awkward"),
        # Llama-3-8B decode (32 query heads, 8 KV heads, width 128), 16 sequences of 1 .. 8192 tokens.
        Shape("large", {"batch": 16, "heads": 32, "kv_heads": 8, "max_len": 8192, "head_dim": 128}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
