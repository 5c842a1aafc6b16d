import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    # scale * (max(0, x) + min(0, alpha (exp(x) - 1))) with torch's constants
    # alpha = 1.6732632423543772, scale = 1.0507009873554805.
    return torch.nn.functional.selu(x)


def make_inputs(shape, dtype, gen):
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=2.5, offset=-0.4, outliers=1e-3),)


def flops(shape):
    return 5.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="selu",
    category="activation",
    description="SELU: scale * (x if x > 0 else alpha (exp(x) - 1)) with torch's alpha = 1.6733, scale = 1.0507, of a 2-D tensor",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 1, "cols": 100003}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
