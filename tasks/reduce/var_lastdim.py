import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

OFFSET = 100.0


def reference(x):
    return torch.var(x, dim=-1, unbiased=False)


def make_inputs(shape, dtype, gen):
    # Rows sit at mean 100 with std 1 (per-row std from 0.5 to 1.5): E[x^2] ~ 1e4 while the
    # variance is ~1, so the one-pass E[x^2] - E[x]^2 in float32 cancels 4 of its ~7 digits (one
    # rounding of E[x^2] alone is ulp(1e4)/2 = 5e-4, 5x the 1e-4 rtol) and fails, while a
    # two-pass, shifted or Welford variance is accurate (x - mean is exact by Sterbenz's lemma).
    # In bfloat16 the inputs are multiples of 0.5 near 100: still a variance of order 1.
    r, c = shape["rows"], shape["cols"]
    x = randn(gen, (r, c), torch.float32, scale=1.0)
    row_std = torch.linspace(0.5, 1.5, r, device=gen.device).unsqueeze(-1)
    return ((x * row_std + OFFSET).to(dtype),)


def flops(shape):
    return 4.0 * shape["rows"] * shape["cols"]  # mean, then centred square and sum


def nbytes_moved(shape, dtype):
    return float(nbytes((shape["rows"], shape["cols"]), dtype) + nbytes((shape["rows"],), dtype))


TASK = Task(
    name="var_lastdim",
    category="reduce",
    description="torch.var(x, dim=-1, unbiased=False) of [R, C] -> [R]; rows have mean 100 and std ~1",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
