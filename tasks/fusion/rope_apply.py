import torch

from mkbench import Shape, Task
from mkbench.contracts import RoundingBound
from mkbench.taskkit import nbytes, randint, randn

THETA = 10000.0


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def reference(x, cos, sin):
    # x [B, S, H, D]; cos, sin [S, D] broadcast over batch and heads (the "rotate half" layout).
    c, s = cos.unsqueeze(1), sin.unsqueeze(1)
    return x * c + _rotate_half(x) * s


def rounding_magnitude(x, cos, sin):
    """First-order error analysis of eager, which rounds each of its three ops to the task's dtype
    (u its unit roundoff; each op computed in float32 inside, one rounding of its result; the
    negation and the concatenation of rotate_half are exact):
        a = x * c             error u|a|
        b = rotate_half(x) * s    error u|b|
        y = a + b             (both carried), + u|y|
    so |y_eager - y| <= u (|x c| + |rotate_half(x) s| + |y|). Where a 10x outlier of x meets
    cos and sin of similar size and opposite sign, a and b (~7 each) cancel to |y| < 1: their
    roundings (2^-9 x 7 each at bfloat16) are far above rtol |y| + atol rms(y) (0.02 x ~1): on an
    H100 eager bfloat16 missed the default tolerance on 1 of 67.1M elements (got 0.8125, expected
    0.7744)."""
    c, s = cos.unsqueeze(1), sin.unsqueeze(1)
    a = x * c
    b = _rotate_half(x) * s
    return ((a.abs() + b.abs() + (a + b).abs()),)


def make_inputs(shape, dtype, gen):
    b, s, h, d = shape["batch"], shape["seq"], shape["heads"], shape["head_dim"]
    x = randn(gen, (b, s, h, d), dtype, scale=1.0, outliers=1e-3, outlier_scale=10.0)
    # Tables for positions start .. start + S - 1 (a chunk deep into a sequence), as the model builds them.
    start = int(randint(gen, (1,), 0, 4096).item())
    pos = torch.arange(start, start + s, device=gen.device, dtype=torch.float64)
    inv_freq = THETA ** (-torch.arange(0, d, 2, device=gen.device, dtype=torch.float64) / d)
    angles = torch.outer(pos, inv_freq)
    angles = torch.cat((angles, angles), dim=-1)
    return (x, angles.cos().to(dtype), angles.sin().to(dtype))


def flops(shape):
    return 3.0 * shape["batch"] * shape["seq"] * shape["heads"] * shape["head_dim"]


def nbytes_moved(shape, dtype):
    b, s, h, d = shape["batch"], shape["seq"], shape["heads"], shape["head_dim"]
    return float(2 * nbytes((b, s, h, d), dtype) + 2 * nbytes((s, d), dtype))


TASK = Task(
    name="rope_apply",
    category="fusion",
    description="rotary position embedding, rotate-half layout: y = x * cos + rotate_half(x) * sin, x [B, S, H, D], cos/sin [S, D] broadcast over B and H",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 2, "seq": 64, "heads": 4, "head_dim": 64}, "small"),
        # One sequence, an odd length and head count, and an 80-wide head (GPT-NeoX / Pythia).
        Shape("awkward", {"batch": 1, "seq": 37, "heads": 3, "head_dim": 80}, "awkward"),
        Shape("large", {"batch": 4, "seq": 4096, "heads": 32, "head_dim": 128}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # slack 2: the analysis is first order and counts one rounding per op where eager's float32
    # internals add a few 2^-24 relative; 2x keeps a faithful implementation off the edge. At
    # float32 (u = 2^-24) the allowance is far under what the bf16_compute control misses by.
    contract=RoundingBound(magnitudes=rounding_magnitude, slack=2.0, description=(
        "allclose vs float64 (default tolerances, atol x rms) plus 2 u (|x cos| + |rotate_half(x) sin| + |y|): the "
        "first-order rounding error of the two products and the sum rounded to the output dtype")),
    flops=flops,
    bytes=nbytes_moved,
)
