"""torch.nan_to_num with its defaults: NaN -> 0, +inf -> the dtype's largest finite value,
-inf -> the dtype's most negative finite value; every finite value (the dtype's extremes
included) passes through unchanged.

Contract: exact at the task's dtype (a selection, no arithmetic). The replacement for +-inf
depends on the dtype (float32 3.4028e38, float16 65504, bfloat16 3.3895e38), so a kernel that
hard-codes one of them fails the others.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randn, uniform


def reference(x):
    return torch.nan_to_num(x)


def make_inputs(shape, dtype, gen):
    s = (shape["rows"], shape["cols"])
    fi = torch.finfo(dtype)
    x = randn(gen, s, torch.float32, scale=100.0, offset=-3.0, outliers=1e-2, outlier_scale=100.0).to(dtype)
    # 5% NaN, 3% +inf, 3% -inf, 1% each the dtype's max / lowest (finite, must stay).
    pick = uniform(gen, s, torch.float32, 0.0, 1.0)
    x = torch.where(pick < 0.05, torch.full_like(x, float("nan")), x)
    x = torch.where((pick >= 0.05) & (pick < 0.08), torch.full_like(x, float("inf")), x)
    x = torch.where((pick >= 0.08) & (pick < 0.11), torch.full_like(x, float("-inf")), x)
    x = torch.where((pick >= 0.11) & (pick < 0.12), torch.full_like(x, fi.max), x)
    x = torch.where((pick >= 0.12) & (pick < 0.13), torch.full_like(x, fi.min), x)
    return (x,)


def flops(shape):
    return 3.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="nan_to_num",
    category="math",
    description="torch.nan_to_num(x) of [R, C] with NaN, +-inf and the dtype's finite extremes: NaN -> 0, +-inf -> the dtype's finite max/min",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 1, "cols": 100003}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=Exact(description="exact at the task's dtype: NaN -> 0, +inf -> finfo(dtype).max, -inf -> finfo(dtype).min, finite values unchanged"),
    flops=flops,
    bytes=nbytes_moved,
)
