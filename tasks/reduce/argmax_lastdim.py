import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randn


def reference(x):
    # torch.max over a dim returns (values, int64 indices); on ties the first maximal index is
    # returned (documented torch semantics, CPU and CUDA). The values are returned too: argmax
    # alone is invariant under every increasing map of x, so it could not show that it depends
    # on x under the validator's perturbation x -> 1.25 x + 0.5.
    values, indices = torch.max(x, dim=-1)
    return values, indices


def make_inputs(shape, dtype, gen):
    # Continuous N(0, 1) draws: in float32 a tie at a row's maximum needs two of the top draws
    # to round to the same float32 (probability about C * 2^-23 per row, negligible), so the
    # int64 argmax is well defined and compared exactly. In bfloat16 (8 bits of mantissa) ties
    # at the maximum do happen in a few percent of rows; there the first maximal index is the
    # answer (torch's rule), which the exact comparison enforces.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=1.0, offset=-0.5),)


def flops(shape):
    return float(shape["rows"] * shape["cols"])


def nbytes_moved(shape, dtype):
    r = shape["rows"]
    return float(nbytes((r, shape["cols"]), dtype) + nbytes((r,), dtype) + nbytes((r,), torch.int64))


TASK = Task(
    name="argmax_lastdim",
    category="reduce",
    description="torch.max(x, dim=-1) of [R, C] -> (max values [R], int64 argmax [R]); ties take the first index",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # The max value is one of the inputs and the index is an integer: both bit-exact.
    contract=Exact(),
    flops=flops,
    bytes=nbytes_moved,
)
