"""Append new keys and values to a KV cache, rotating the keys first (what
flash_attn_with_kvcache does with rotary_cos / rotary_sin / cache_seqlens).

Contract: the outputs are new tensors (never the input caches, which must stay untouched):
k_out = k_cache and v_out = v_cache everywhere except rows start[b] .. start[b] + T - 1 of each
sequence b, where k_out[b, start[b] + t] = rope(k_new[b, t], position start[b] + t) and
v_out[b, start[b] + t] = v_new[b, t]. RoPE is the rotate-half form: dimension i < D/2 is paired
with i + D/2, using cos/sin tables [Smax, D/2]. Copied elements are exact; rotated keys are judged
against a float64 rotation.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

THETA = 500_000.0  # Llama-3's rope_theta


def reference(k_cache, v_cache, k_new, v_new, start, cos_table, sin_table):
    # k_cache, v_cache [B, Smax, Hkv, D]; k_new, v_new [B, T, Hkv, D]; start [B] int32.
    acc = torch.promote_types(k_new.dtype, torch.float32)
    b, t = k_new.shape[0], k_new.shape[1]
    pos = start.to(torch.int64).view(b, 1) + torch.arange(t, device=k_new.device).view(1, t)  # [B, T]
    cos = cos_table.to(acc)[pos].unsqueeze(2)  # [B, T, 1, D/2]
    sin = sin_table.to(acc)[pos].unsqueeze(2)
    x1, x2 = k_new.to(acc).chunk(2, dim=-1)
    k_rot = torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).to(k_cache.dtype)
    rows = torch.arange(b, device=k_new.device).view(b, 1).expand(b, t)
    k_out, v_out = k_cache.clone(), v_cache.clone()
    k_out[rows, pos] = k_rot
    v_out[rows, pos] = v_new
    return k_out, v_out


def make_inputs(shape, dtype, gen):
    b, t, hkv, smax, d = shape["batch"], shape["new"], shape["kv_heads"], shape["max_len"], shape["head_dim"]
    k_cache = randn(gen, (b, smax, hkv, d), dtype, offset=0.2, outliers=1e-3, outlier_scale=6.0)
    v_cache = randn(gen, (b, smax, hkv, d), dtype, offset=0.3, outliers=1e-3, outlier_scale=10.0)
    k_new = randn(gen, (b, t, hkv, d), dtype, scale=1.5, offset=-0.2, outliers=1e-3, outlier_scale=6.0)
    v_new = randn(gen, (b, t, hkv, d), dtype, scale=1.5, offset=0.1, outliers=1e-3, outlier_scale=10.0)
    # Distinct cache lengths (where each sequence's new tokens go), anywhere that leaves room.
    start = torch.randperm(smax - t + 1, generator=gen, device=gen.device)[:b].to(torch.int32)
    inv_freq = THETA ** (-torch.arange(0, d, 2, device=gen.device, dtype=torch.float64) / d)
    angles = torch.outer(torch.arange(smax, device=gen.device, dtype=torch.float64), inv_freq)
    return (k_cache, v_cache, k_new, v_new, start, angles.cos().to(dtype), angles.sin().to(dtype))


def flops(shape):
    return 3.0 * shape["batch"] * shape["new"] * shape["kv_heads"] * shape["head_dim"]  # the rotation


def nbytes_moved(shape, dtype):
    b, t, hkv, smax, d = shape["batch"], shape["new"], shape["kv_heads"], shape["max_len"], shape["head_dim"]
    # Each cache: the rows not overwritten are read, every row is written; the new rows read once;
    # one cos and one sin row (D/2 each) per new token; start.
    caches = 2 * (nbytes((b, smax - t, hkv, d), dtype) + nbytes((b, smax, hkv, d), dtype))
    return float(caches + 2 * nbytes((b, t, hkv, d), dtype) + nbytes((b, t, d), dtype) + nbytes((b,), torch.int32))


TASK = Task(
    name="kv_cache_append_rope",
    category="fusion",
    description="KV-cache append with RoPE: rotate new keys k_new [B, T, Hkv, D] at positions start[b] + t and write "
                "them and v_new into copies of the caches [B, Smax, Hkv, D]; returns the updated (k_cache, v_cache), "
                "not aliasing the inputs",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 4, "new": 16, "kv_heads": 2, "max_len": 128, "head_dim": 64}, "small"),
        # A decode step (T = 1) for 3 sequences, one KV head of width 80, an odd cache length.
        Shape("awkward", {"batch": 3, "new": 1, "kv_heads": 1, "max_len": 77, "head_dim": 80}, "awkward"),
        # Llama-3-8B caches (8 KV heads of width 128), 16 sequences of up to 4096 tokens, 16 new
        # tokens each (speculative decoding / chunked append).
        Shape("large", {"batch": 16, "new": 16, "kv_heads": 8, "max_len": 4096, "head_dim": 128}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
