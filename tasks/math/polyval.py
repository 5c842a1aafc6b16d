import torch

from mkbench import Shape, Task
from mkbench.contracts import RoundingBound
from mkbench.taskkit import itemsize, nbytes, randn, uniform

DEGREE = 7


def reference(x, coeffs):
    # coeffs[k] multiplies x**k; Horner's rule from the highest degree down.
    y = torch.zeros_like(x) + coeffs[DEGREE]
    for k in range(DEGREE - 1, -1, -1):
        y = y * x + coeffs[k]
    return y


def rounding_magnitude(x, coeffs):
    """Running first-order error analysis of eager's Horner, which rounds each product and each
    sum to the task's dtype (u its unit roundoff; each op computed in float32 inside): alongside
    each value of the float64 recurrence, e bounds its error in units of u. The start
    zeros + c7 is exact; each step
        p = y * x             carries |x| e(y), + |p| for its rounding
        y = p + c_k           (that), + |y| for its rounding
    so e grows with the degree and with |x|: at |x| = 1.6 an early rounding is carried by up to
    1.6^6 ~ 17, and intermediates (up to |x|^7 ~ 27 times the coefficients) that cancel to a
    small y leave errors far above rtol |y| + atol rms(y): on an H100 eager bfloat16 missed the
    default tolerance on 316 of 135k elements (got 6.906, expected 6.690). Horner in float32
    inside and rounded once (a fused kernel) is well within; so is the float64 recurrence."""
    y = torch.zeros_like(x) + coeffs[DEGREE]
    e = torch.zeros_like(x)
    for k in range(DEGREE - 1, -1, -1):
        p = y * x
        y = p + coeffs[k]
        e = x.abs() * e + p.abs() + y.abs()
    return (e,)


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
    # slack 2: the analysis is first order and counts one rounding per op where eager's float32
    # internals add a few 2^-24 relative; 2x keeps a faithful implementation off the edge. At
    # float32 (u = 2^-24) the allowance is far under what the bf16_compute control misses by.
    contract=RoundingBound(magnitudes=rounding_magnitude, slack=2.0, description=(
        "allclose vs float64 (default tolerances, atol x rms) plus 2 u e per element, e the running first-order "
        "rounding-error bound of Horner's products and sums rounded to the output dtype along the float64 "
        "recurrence")),
    flops=flops,
    bytes=nbytes_moved,
)
