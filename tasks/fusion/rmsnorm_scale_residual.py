import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

EPS = 1e-6


def reference(x, residual, weight):
    h = x + residual  # the updated residual stream, returned for the next block
    rstd = torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + EPS)
    return h * rstd * weight, h


def make_inputs(shape, dtype, gen):
    t, d = shape["tokens"], shape["hidden"]
    x = randn(gen, (t, d), dtype, scale=0.5)  # the sublayer output being added
    # Residual streams carry a few huge channels; they dominate the mean square of their row.
    residual = randn(gen, (t, d), dtype, scale=1.0, offset=0.1, outliers=2e-3, outlier_scale=50.0)
    weight = randn(gen, (d,), dtype, scale=0.2, offset=1.0)
    return (x, residual, weight)


def flops(shape):
    return 6.0 * shape["tokens"] * shape["hidden"]  # add, square-sum, normalise, scale


def nbytes_moved(shape, dtype):
    t, d = shape["tokens"], shape["hidden"]
    return float(4 * nbytes((t, d), dtype) + nbytes((d,), dtype))


TASK = Task(
    name="rmsnorm_scale_residual",
    category="fusion",
    description="LLM pre-norm step: h = x + residual; y = h * rsqrt(mean(h^2, -1) + 1e-6) * weight over [T, D]; returns (y, h)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"tokens": 64, "hidden": 1024}, "small"),
        # One token (a decode step) with a hidden size longer than one block and a masked tail.
        Shape("awkward", {"tokens": 1, "hidden": 5003}, "awkward"),
        Shape("large", {"tokens": 16384, "hidden": 4096}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
