import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

EPS = 1e-5


def reference(x, weight, bias):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, EPS)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    # Rows sit at mean 100 with std 1: E[x^2] - E[x]^2 cancels 4 of float32's ~7 digits, so a
    # one-pass variance is visibly wrong, while a two-pass (or shifted / Welford) one is fine.
    x = randn(gen, (r, c), dtype, scale=1.0, offset=100.0)
    weight = randn(gen, (c,), dtype, scale=0.25, offset=1.0)
    bias = randn(gen, (c,), dtype, scale=0.5)
    return (x, weight, bias)


def flops(shape):
    return 8.0 * shape["rows"] * shape["cols"]  # mean, centred square, normalise, scale and shift


def nbytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return float(2 * nbytes((r, c), dtype) + 2 * nbytes((c,), dtype))


TASK = Task(
    name="layer_norm",
    category="normalization",
    description="F.layer_norm over the last dim of [R, C] with weight and bias, eps=1e-5; rows have mean 100 and std 1",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        # A row longer than one block (the looped path) with a masked tail, and an odd row count.
        Shape("awkward", {"rows": 7, "cols": 10007}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 4096}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
