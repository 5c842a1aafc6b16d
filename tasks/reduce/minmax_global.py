"""Global minimum and maximum of a whole tensor, returned as one tensor [2] = (min, max).

(Stacked rather than two 0-d outputs: a single-element output cannot be told apart from "a
constant equal to its mean", one of the negative controls.) Contract: exact at the task's dtype
(both are selected inputs). The inputs hold no NaN. The global maximum is the very last element
(a masked tail that drops it fails) and the global minimum sits in the first row.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import itemsize, nbytes, randint, randn


def reference(x):
    return torch.stack([torch.amin(x), torch.amax(x)])


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    x = randn(gen, (r, c), torch.float32, scale=3.0, offset=-1.0, outliers=1e-4, outlier_scale=5.0)
    top, bottom = float(x.max()), float(x.min())
    x[r - 1, c - 1] = top + 1.0 + float(randn(gen, (1,), torch.float32).abs())
    x[0, int(randint(gen, (1,), 0, c))] = bottom - 1.0 - float(randn(gen, (1,), torch.float32).abs())
    return (x.to(dtype),)


def flops(shape):
    return 2.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(nbytes((shape["rows"], shape["cols"]), dtype) + 2 * itemsize(dtype))


TASK = Task(
    name="minmax_global",
    category="reduce",
    description="global (min, max) of a whole [R, C] tensor as a [2] tensor; the max is the last element",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 1, "cols": 100003}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=Exact(description="exact at the task's dtype: [min(x), max(x)] over all elements (inputs hold no NaN)"),
    flops=flops,
    bytes=nbytes_moved,
)
