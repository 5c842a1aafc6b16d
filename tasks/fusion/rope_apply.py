import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randint, randn

THETA = 10000.0


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def reference(x, cos, sin):
    # x [B, S, H, D]; cos, sin [S, D] broadcast over batch and heads (the "rotate half" layout).
    c, s = cos.unsqueeze(1), sin.unsqueeze(1)
    return x * c + _rotate_half(x) * s


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
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
