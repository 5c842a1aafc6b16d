import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import nbytes, randn

EPS = 1e-5


# float32 atol, derived: the exact mean of values near 100 is not a float32; rounding it alone
# shifts every centred value by up to ulp(100)/2 = 3.8e-6, so outputs move by up to
# 3.8e-6 * rstd * |w| (about 8e-6 here), and a float32 sum of C values near 100 adds a few more
# ulp(100) to the mean. Near-zero outputs are judged by atol alone, and the default 1e-5 x rms
# (about 1.2e-5) is already half used by that rounding. Measured on the large shape: torch's own
# float32 layer_norm reaches 1.5-2.0x the default bound (CPU and CUDA, eager and compiled), a
# plain two-pass Triton kernel 1.4-1.7x. With 5e-5 x rms those sit at 0.3-0.45 of the bound,
# while the one-pass E[x^2] - E[x]^2 variance still fails by 20x or more; rtol (untouched, 1e-4)
# still judges every output away from zero. bfloat16 keeps its default.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


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
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
