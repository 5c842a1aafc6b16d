import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform


def reference(x):
    return torch.erf(x)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    # Three regions, mixed element by element: |x| < 0.5 where erf(x) ~ 2x/sqrt(pi) and a kernel
    # that evaluates 1 - erfc(x) loses the low bits (tiny values down to 1e-6 included); the
    # transition 0.5 < |x| < 4 where rational approximations switch branches; and the saturated
    # tail |x| > 4 (erf = +-1 to float32 precision) with outliers up to +-60.
    core = randn(gen, (r, c), torch.float32, scale=1.5, offset=0.1, outliers=2e-3, outlier_scale=30.0)
    tiny = randn(gen, (r, c), torch.float32, scale=1e-4)
    pick = uniform(gen, (r, c), torch.float32, 0.0, 1.0)
    x = torch.where(pick < 0.1, tiny, core)
    return (x.to(dtype),)


def flops(shape):
    return 10.0 * shape["rows"] * shape["cols"]  # a rational approximation, counted as ~10 ops


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["rows"], shape["cols"]), dtype))


TASK = Task(
    name="erf",
    category="math",
    description="torch.erf(x) of a 2-D tensor [R, C]: tiny arguments, the branch transition and the saturated tails",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 33, "cols": 4097}, "awkward"),
        Shape("large", {"rows": 8192, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    # Outputs lie in [-1, 1] with rms ~0.7, so the default atol (1e-5 x rms) and rtol hold everywhere.
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
