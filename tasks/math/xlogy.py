"""x * log(y) with the xlogy convention: 0 where x == 0 (even for y = 0 or inf), NaN if y is NaN.

Contract: the default allclose against float64 xlogy of the same (rounded) inputs; NaN/inf
positions must match. Special cases, all present in the inputs: x = 0 with y = 0, inf or NaN
(-> 0, 0, NaN); y = 0 with x != 0 (-> -inf * sign(x)); y = +inf (-> +inf * sign(x)); y < 0 (NaN);
y near 1, where log(y) ~ y - 1 is small (judged by atol = 1e-5 x rms ~ 1e-4 absolute).
A plain x * log(y) kernel gives NaN at x = 0, y in {0, inf} and fails.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform


def reference(x, y):
    return torch.xlogy(x, y)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    x = randn(gen, s, torch.float32, scale=2.0, offset=0.2, outliers=1e-3)
    x = torch.where(uniform(gen, s, torch.float32, 0.0, 1.0) < 0.2, torch.zeros_like(x), x)  # 20% exact zeros
    # y: 75% log-uniform in [1e-6, 1e6]; 10% 1 + N(0, 1e-2); 15% special.
    y = torch.exp(uniform(gen, s, torch.float32, -13.8, 13.8))
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    y = torch.where(pick < 0.10, randn(gen, s, torch.float32, scale=1e-2, offset=1.0), y)
    y = torch.where((pick >= 0.75) & (pick < 0.82), torch.zeros_like(y), y)                  # y = 0
    y = torch.where((pick >= 0.82) & (pick < 0.86), torch.full_like(y, float("inf")), y)     # y = inf
    y = torch.where((pick >= 0.86) & (pick < 0.90), -y.abs() - 0.5, y)                       # y < 0
    y = torch.where((pick >= 0.90) & (pick < 0.91), torch.full_like(y, float("nan")), y)     # y NaN
    return (x.to(dtype), y.to(dtype))


def flops(shape):
    return 3.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(3 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="xlogy",
    category="math",
    description="torch.xlogy(x, y) = x * log(y) with 0 where x == 0 (unless y is NaN), of two [R, C] tensors with zeros, inf and NaN",
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
