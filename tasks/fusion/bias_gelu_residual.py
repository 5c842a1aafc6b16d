import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x, bias, residual):
    return torch.nn.functional.gelu(x + bias) + residual


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    x = randn(gen, (r, c), dtype, scale=2.0, offset=-0.3, outliers=1e-3)
    bias = randn(gen, (c,), dtype, scale=0.5)
    residual = randn(gen, (r, c), dtype, scale=1.0)
    return (x, bias, residual)


def flops(shape):
    return 10.0 * shape["rows"] * shape["cols"]  # bias add, GELU (erf as a handful), residual add


def nbytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return float(3 * nbytes((r, c), dtype) + nbytes((c,), dtype))


TASK = Task(
    name="bias_gelu_residual",
    category="fusion",
    description="y = gelu(x + bias) + residual (exact erf GELU), x and residual [R, C], bias [C] broadcast over rows; one memory-bound fused pass",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        # Odd row length: the bias index wraps inside a block, and the tail block is masked.
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
