import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randint, randn


def reference(logits, target):
    return torch.nn.functional.cross_entropy(logits, target, reduction="none")


def make_inputs(shape, dtype, gen):
    n, v = shape["N"], shape["V"]
    # Each row gets its own large offset (about -90 to +210): exp() without subtracting the row
    # max overflows to inf in float32 on the high rows and underflows to 0 on the low ones.
    row_offset = randn(gen, (n, 1), torch.float32, scale=50.0, offset=60.0)
    logits = randn(gen, (n, v), torch.float32, scale=4.0, outliers=1e-3, outlier_scale=4.0) + row_offset
    target = randint(gen, (n,), 0, v)
    return (logits.to(dtype), target)


def flops(shape):
    # max, subtract, exp, sum, plus a log and a subtraction per row (exp counted as a handful)
    return 6.0 * shape["N"] * shape["V"]


def nbytes_moved(shape, dtype):
    n, v = shape["N"], shape["V"]
    return nbytes((n, v), dtype) + nbytes((n,), torch.int64) + nbytes((n,), dtype)


TASK = Task(
    name="cross_entropy",
    category="loss",
    description="per-row cross entropy of logits [N, V] against int64 targets [N], reduction='none'; loss in the logits dtype",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 64, "V": 1000}, "small"),
        Shape("awkward", {"N": 33, "V": 3001}, "awkward"),
        Shape("large", {"N": 4096, "V": 32000}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
