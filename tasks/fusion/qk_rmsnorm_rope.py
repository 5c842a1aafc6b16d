import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randint, randn

EPS = 1e-6  # Qwen3's rms_norm_eps
THETA = 1_000_000.0  # Qwen3's rope_theta


def _rms_rope(x, weight, cos, sin):
    # x [B, S, H, D]; RMSNorm over D with a [D] weight, then rotate-half RoPE with cos/sin
    # [B, S, 1, D/2] (dimension i is paired with i + D/2).
    x = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * weight
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def reference(q, k, q_weight, k_weight, positions, cos_table, sin_table):
    # Everything in (at least) float32 between the loads and the two output roundings.
    acc = torch.promote_types(q.dtype, torch.float32)
    cos = cos_table.to(acc)[positions].unsqueeze(2)
    sin = sin_table.to(acc)[positions].unsqueeze(2)
    return (_rms_rope(q.to(acc), q_weight.to(acc), cos, sin).to(q.dtype),
            _rms_rope(k.to(acc), k_weight.to(acc), cos, sin).to(k.dtype))


def make_inputs(shape, dtype, gen):
    b, s, hq, hkv, d, p = shape["batch"], shape["seq"], shape["q_heads"], shape["kv_heads"], shape["head_dim"], shape["max_pos"]
    f32 = torch.float32
    # Projection outputs: heads with their own scale (0.2..3) and a few large channels, which is
    # why the model normalises q and k per head.
    q_scale = randn(gen, (1, 1, hq, 1), f32).abs() + 0.2
    k_scale = randn(gen, (1, 1, hkv, 1), f32).abs() + 0.2
    q = (randn(gen, (b, s, hq, d), f32, offset=0.1, outliers=2e-3, outlier_scale=15.0) * q_scale).to(dtype)
    k = (randn(gen, (b, s, hkv, d), f32, offset=-0.1, outliers=2e-3, outlier_scale=15.0) * k_scale).to(dtype)
    q_weight = randn(gen, (d,), dtype, scale=0.3, offset=1.0)
    k_weight = randn(gen, (d,), dtype, scale=0.3, offset=1.0)
    # Each sequence is a chunk starting at its own offset (continued prefill): positions differ
    # per batch entry and run past the table's first rows.
    start = randint(gen, (b, 1), 0, p - s + 1)
    positions = start + torch.arange(s, device=gen.device).view(1, s)
    inv_freq = THETA ** (-torch.arange(0, d, 2, device=gen.device, dtype=torch.float64) / d)
    angles = torch.outer(torch.arange(p, device=gen.device, dtype=torch.float64), inv_freq)
    return (q, k, q_weight, k_weight, positions, angles.cos().to(dtype), angles.sin().to(dtype))


def flops(shape):
    b, s, hq, hkv, d = shape["batch"], shape["seq"], shape["q_heads"], shape["kv_heads"], shape["head_dim"]
    return 7.0 * b * s * (hq + hkv) * d  # square-sum, normalise and weight (4), rotation (3)


def nbytes_moved(shape, dtype):
    b, s, hq, hkv, d = shape["batch"], shape["seq"], shape["q_heads"], shape["kv_heads"], shape["head_dim"]
    # q and k read and written, the two weights, positions, and one cos and one sin row (D/2
    # each) per token.
    return float(2 * nbytes((b, s, hq + hkv, d), dtype) + nbytes((2 * d,), dtype) + nbytes((b, s), torch.int64)
                 + nbytes((b, s, d), dtype))


TASK = Task(
    name="qk_rmsnorm_rope",
    category="fusion",
    description="Qwen3-style QK-norm + RoPE: per-head RMSNorm over D (eps 1e-6, [D] weights for q and k), then "
                "rotate-half rotary embedding at per-token positions from cos/sin tables [P, D/2]; q [B, S, Hq, D], "
                "k [B, S, Hkv, D]; returns (q, k)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 2, "seq": 64, "q_heads": 8, "kv_heads": 2, "head_dim": 64, "max_pos": 512}, "small"),
        # Odd sequence length and head counts (a 5:1 grouping), an 80-wide head.
        Shape("awkward", {"batch": 3, "seq": 37, "q_heads": 5, "kv_heads": 1, "head_dim": 80, "max_pos": 300}, "awkward"),
        # Qwen3-8B: 32 query heads, 8 KV heads of width 128, 4 x 4096 tokens.
        Shape("large", {"batch": 4, "seq": 4096, "q_heads": 32, "kv_heads": 8, "head_dim": 128, "max_pos": 32768}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
