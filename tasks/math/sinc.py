"""Normalized sinc: sin(pi x) / (pi x), with sinc(0) = 1 (torch.sinc).

Contract: the default allclose against float64 sinc of the same (rounded) input. Outputs lie in
[-0.22, 1] with rms ~0.35; zeros at the non-zero integers are judged by atol (1e-5 x rms for
float32: computing sin(pi x) after rounding pi x in float32 is off by at most ulp(pi |x|) / 2,
i.e. below 1e-7 absolute in sinc for |x| <= 300, so an exact argument reduction is not needed).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randint, randn, uniform


def reference(x):
    return torch.sinc(x)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    # 75% N(0.3, 3^2) with 1% outliers out to |x| ~ 100; 10% tiny |x| < 1e-3 (sinc ~ 1 - (pi x)^2 / 6:
    # the 0/0 at x = 0 must be handled without a branch that loses accuracy next to it); 10% exact
    # integers in [-20, 20] (sinc = 0, except sinc(0) = 1); 5% half-integers (extrema of sin).
    body = randn(gen, s, torch.float32, scale=3.0, offset=0.3, outliers=1e-2, outlier_scale=30.0)
    tiny = randn(gen, s, torch.float32, scale=3e-4)
    integer = randint(gen, s, -20, 21, torch.float32)
    half = integer + 0.5
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    x = torch.where(pick < 0.75, body, torch.where(pick < 0.85, tiny, torch.where(pick < 0.95, integer, half)))
    return (x.to(dtype),)


def flops(shape):
    return 6.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="sinc",
    category="math",
    description="torch.sinc(x) = sin(pi x) / (pi x) of [R, C], sinc(0) = 1; tiny |x|, exact integers (zeros) and half-integers",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
