import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randn


def reference(x):
    return torch.amax(x, dim=-1)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    x = randn(gen, (r, c), torch.float32, scale=1.0, offset=0.0, outliers=1e-3)
    # Every other row is shifted to all-negative values: a max initialised to 0 is wrong there.
    x[1::2] -= 8.0
    # NaN must propagate as in torch: a row holding a NaN anywhere reduces to NaN. Rows 0 and 2
    # carry one NaN at the first / last column (the masked tail), row 4 a NaN next to a +inf;
    # row 6 has a +inf and no NaN. Rows 1, 3 and the middle and last rows stay finite.
    x[0, 0] = float("nan")
    x[2, c - 1] = float("nan")
    x[4, c // 2] = float("nan")
    x[4, c // 3] = float("inf")
    x[6, (2 * c) // 3] = float("inf")
    return (x.to(dtype),)


def flops(shape):
    return float(shape["rows"] * shape["cols"])


def nbytes_moved(shape, dtype):
    return float(nbytes((shape["rows"], shape["cols"]), dtype) + nbytes((shape["rows"],), dtype))


TASK = Task(
    name="amax_lastdim",
    category="reduce",
    description="torch.amax(x, dim=-1) of [R, C] -> [R]; a NaN anywhere in a row makes that row NaN, as in torch",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        # Odd row count, a row length that leaves a masked tail (with a NaN in it, row 2).
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # A max selects one of its inputs: no rounding happens, so bit-exact (NaN where the reference
    # is NaN) is the only right answer at any dtype and any reduction order.
    contract=Exact(),
    flops=flops,
    bytes=nbytes_moved,
)
