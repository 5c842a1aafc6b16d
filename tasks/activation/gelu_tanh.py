import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x):
    # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the GPT-2 / Gemma approximation.
    return torch.nn.functional.gelu(x, approximate="tanh")


def make_inputs(shape, dtype, gen):
    # |x| ~ 1..3 is where the tanh form and exact (erf) GELU differ most (up to 4.7e-4 absolute,
    # ~20x the float32 tolerance here), so a kernel computing the wrong variant fails.
    return (randn(gen, (shape["rows"], shape["cols"]), dtype, scale=2.5, offset=-0.3, outliers=1e-3),)


def flops(shape):
    return 9.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="gelu_tanh",
    category="activation",
    description="tanh-approximated GELU (F.gelu(approximate='tanh')) of a 2-D tensor; the erf form does not pass",
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
