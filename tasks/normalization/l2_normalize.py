"""F.normalize(x, p=2, dim=-1, eps=1e-12): each row divided by max(||row||_2, eps).

Edge rows built into every input: row 0 is all zeros (output zeros, not NaN), and row 1 is scaled
to a norm of 0.5e-12, below eps: its output is x / 1e-12 (a row of norm 0.5), so a kernel that
adds eps to the norm instead of taking the maximum is off by a third there. (Clamping the squared
norm at eps^2 is the same function and passes.) Squares of ~1e-14 are normal float32 numbers.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

EPS = 1e-12


def reference(x):
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32  # opmath for half types
    xf = x.to(acc)
    norm = xf.square().sum(-1, keepdim=True).sqrt()
    return (xf / norm.clamp_min(EPS)).to(x.dtype)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    # Rows of different lengths (norm scale 0.1 .. 10 across rows) with an offset and outliers.
    row_scale = torch.logspace(-1, 1, r, device=gen.device).view(r, 1)
    x = randn(gen, (r, c), torch.float32, scale=1.0, offset=0.2, outliers=1e-3, outlier_scale=10.0) * row_scale
    x[0] = 0.0
    x[1] *= 0.5e-12 / float(x[1].double().norm())
    return (x.to(dtype),)


def flops(shape):
    return 3.0 * shape["rows"] * shape["cols"]  # square-accumulate, then one multiply per element


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="l2_normalize",
    category="normalization",
    description="F.normalize(x, p=2, dim=-1, eps=1e-12) on [R, C]: rows divided by max(||row||_2, eps); includes a zero "
                "row and a row whose norm is below eps",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 5, "cols": 3001}, "awkward"),
        # A bank of 131072 CLIP ViT-L/14 image embeddings (768-d) normalised for retrieval: 805 MB fp32.
        Shape("large", {"rows": 131072, "cols": 768}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
