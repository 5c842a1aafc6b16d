import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, nbytes, randn, uniform

DEGREE = 7


def reference(x, coeffs):
    # coeffs[k] multiplies x**k; Horner's rule from the highest degree down.
    y = torch.zeros_like(x) + coeffs[DEGREE]
    for k in range(DEGREE - 1, -1, -1):
        y = y * x + coeffs[k]
    return y


def make_inputs(shape, dtype, gen):
    # x in [-1.6, 1.6]: both signs, near zero (constant term dominates) and |x| > 1 (the x**7 term
    # dominates, |x|**7 up to ~27). Random coefficients of both signs give real roots in range,
    # where terms cancel.
    x = uniform(gen, (shape["rows"], shape["cols"]), dtype, -1.6, 1.6)
    coeffs = randn(gen, (DEGREE + 1,), dtype)
    return (x, coeffs)


def flops(shape):
    return 2.0 * DEGREE * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype) + (DEGREE + 1) * itemsize(dtype))


TASK = Task(
    name="polyval",
    category="math",
    description="degree-7 polynomial sum_k coeffs[k] * x**k (Horner) of x [R, C] with coeffs [8]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
