import torch

from mkbench import Shape, Task
from mkbench.contracts import RoundingBound
from mkbench.taskkit import nbytes, randint, randn

THETA = 500000.0  # Llama-3's rope_theta


def _rope(x, cos, sin):
    # NeoX / Llama "rotate half" layout: the first half of the head dimension pairs with the second.
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def _split_heads(qkv, positions, cos_cache, sin_cache, n_q_heads, n_kv_heads):
    """q, k, v as [B, S, H, D], and the tables looked up by each token's position id: [B, S, 1, D/2],
    broadcast over heads."""
    b, s, _ = qkv.shape
    d = qkv.shape[-1] // (n_q_heads + 2 * n_kv_heads)
    q, k, v = qkv.split((n_q_heads * d, n_kv_heads * d, n_kv_heads * d), dim=-1)
    cos, sin = cos_cache[positions].unsqueeze(2), sin_cache[positions].unsqueeze(2)
    return (q.reshape(b, s, n_q_heads, d), k.reshape(b, s, n_kv_heads, d), v.reshape(b, s, n_kv_heads, d),
            cos, sin)


def reference(qkv, positions, cos_cache, sin_cache, n_q_heads, n_kv_heads):
    q, k, v, cos, sin = _split_heads(qkv, positions, cos_cache, sin_cache, n_q_heads, n_kv_heads)
    # Head-major outputs [B, H, S, D], contiguous, as attention kernels read them.
    return tuple(t.transpose(1, 2).contiguous() for t in (_rope(q, cos, sin), _rope(k, cos, sin), v))


def _rope_magnitude(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]

    def terms(p, r, y):  # |p| + |r| + |y| for y = p - r or p + r
        return p.abs() + r.abs() + y.abs()
    return torch.cat((terms(x1 * cos, x2 * sin, x1 * cos - x2 * sin), terms(x2 * cos, x1 * sin, x2 * cos + x1 * sin)),
                     dim=-1)


def rounding_magnitude(qkv, positions, cos_cache, sin_cache, n_q_heads, n_kv_heads):
    """First-order error analysis of eager at the task's dtype (u its unit roundoff, 2^-8 at
    bfloat16), per rotated element y = x1 cos - x2 sin (and x2 cos + x1 sin): PyTorch forms each
    product exactly in float32 and rounds it, then rounds the sum, so
        p1 = x1 cos rounded      error <= u |x1 cos|   carried to y with weight 1
        p2 = x2 sin rounded      error <= u |x2 sin|   carried to y with weight 1
        y  = p1 - p2 rounded     error <= u |y|
    m = |x1 cos| + |x2 sin| + |y| (the tables are inputs, already rounded: no error of eager's).
    The products are relative to the terms, not the result, which cancels where x1 cos ~ x2 sin:
    there an error that is a fraction of an ulp of the terms is many ulps of y. On one H200 eager
    bfloat16 failed the plain allclose at the large shape: "1/67108864 elements outside rtol=0.02
    atol=0.02*rms (worst: got -0.0625, expected -0.0170898)". v is copied: no allowance."""
    q, k, _, cos, sin = _split_heads(qkv, positions, cos_cache, sin_cache, n_q_heads, n_kv_heads)
    return _rope_magnitude(q, cos, sin).transpose(1, 2), _rope_magnitude(k, cos, sin).transpose(1, 2), None


def make_inputs(shape, dtype, gen):
    b, s, hq, hkv, d = shape["batch"], shape["seq"], shape["q_heads"], shape["kv_heads"], shape["head_dim"]
    max_pos = shape["max_pos"]
    qkv = randn(gen, (b, s, (hq + 2 * hkv) * d), dtype, scale=1.0, offset=0.05, outliers=1e-3, outlier_scale=10.0)
    # Each sequence is a contiguous chunk starting at its own offset (continued prefill / packed
    # batches): the position ids, not the token index, select the table rows.
    start = randint(gen, (b, 1), 0, max_pos - s + 1)
    positions = start + torch.arange(s, device=gen.device).view(1, s)
    inv_freq = THETA ** (-torch.arange(0, d, 2, device=gen.device, dtype=torch.float64) / d)
    angles = torch.outer(torch.arange(max_pos, device=gen.device, dtype=torch.float64), inv_freq)
    return (qkv, positions, angles.cos().to(dtype), angles.sin().to(dtype), hq, hkv)


def flops(shape):
    b, s, hq, hkv, d = shape["batch"], shape["seq"], shape["q_heads"], shape["kv_heads"], shape["head_dim"]
    return 3.0 * b * s * (hq + hkv) * d  # two multiplies and an add per rotated element


def nbytes_moved(shape, dtype):
    b, s, hq, hkv, d = shape["batch"], shape["seq"], shape["q_heads"], shape["kv_heads"], shape["head_dim"]
    # qkv read and q, k, v written once; the table rows used (at most S * B of them) and the ids.
    rows = min(b * s, shape["max_pos"])
    return float(2 * nbytes((b, s, (hq + 2 * hkv) * d), dtype) + 2 * nbytes((rows, d // 2), dtype) + 8 * b * s)


TASK = Task(
    name="qkv_split_rope",
    category="fusion",
    description="split a fused QKV projection [B, S, (Hq + 2 Hkv) D] into head-major q [B, Hq, S, D], k and v [B, Hkv, S, D] (GQA), applying rotate-half RoPE to q and k from cos/sin caches [P, D/2] indexed by int64 position ids [B, S]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 2, "seq": 64, "q_heads": 8, "kv_heads": 2, "head_dim": 64, "max_pos": 512}, "small"),
        # One sequence of odd length, 3 query heads sharing one KV head, an 80-wide head (not a power of two).
        Shape("awkward", {"batch": 1, "seq": 37, "q_heads": 3, "kv_heads": 1, "head_dim": 80, "max_pos": 300}, "awkward"),
        # Llama-3-8B attention (32 query heads, 8 KV heads, head_dim 128) over 4 x 4096 tokens:
        # 384 MiB read and 384 MiB written in float32.
        Shape("large", {"batch": 4, "seq": 4096, "q_heads": 32, "kv_heads": 8, "head_dim": 128, "max_pos": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # slack 2 over eager's first-order bound, as ger_rank1_update (rounding_magnitude says what it covers)
    contract=RoundingBound(magnitudes=rounding_magnitude, slack=2.0, description=(
        "allclose vs float64 (the dtype's default rtol, atol x rms) plus 2 u (|x1 cos| + |x2 sin| + |y|) on the rotated "
        "q and k: eager's three roundings (two products, their sum) to the output dtype, first order; the products are "
        "relative to the terms, not the result, which cancels where x1 cos ~ x2 sin. v: allclose")),
    flops=flops,
    bytes=nbytes_moved,
)
