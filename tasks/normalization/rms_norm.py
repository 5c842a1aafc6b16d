import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

EPS = 1e-6


def reference(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    x = randn(gen, (r, c), torch.float32, scale=1.0, offset=0.1, outliers=1e-3)
    # Row 1 is scaled to 1e-3 so that mean(x^2) ~ 1e-6 ~ eps: eps placement and value matter
    # (eps 1e-5 or eps outside the rsqrt changes that row by far more than the tolerance).
    x[1] *= 1e-3
    weight = randn(gen, (c,), torch.float32, scale=0.25, offset=1.0)
    return (x.to(dtype), weight.to(dtype))


def flops(shape):
    return 4.0 * shape["rows"] * shape["cols"]  # square and sum, normalise, scale


def nbytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return float(2 * nbytes((r, c), dtype) + nbytes((c,), dtype))


TASK = Task(
    name="rms_norm",
    category="normalization",
    description="RMSNorm over the last dim of [R, C]: x * rsqrt(mean(x^2) + 1e-6) * weight",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        # A row longer than one block with a masked tail, and an odd row count.
        Shape("awkward", {"rows": 7, "cols": 10007}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
