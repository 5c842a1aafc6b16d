"""Number of non-zero elements in each row: out[r] = #{j : x[r, j] != 0} (torch.count_nonzero).

Contract: exact int64 counts. What counts as non-zero, written out (IEEE comparison x != 0):
  * +0 and -0 are zero
  * subnormals are non-zero: a kernel that flushes denormals (FTZ) before comparing undercounts
    (every row holds about 5% subnormals, float32 down to 2^-149)
  * NaN and +-inf are non-zero
Rows have zero fractions from 0% (row 0: none, count C) to 100% (the last row: all zeros).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randint, randn, uniform


def reference(x):
    return torch.count_nonzero(x, dim=-1)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    fi = torch.finfo(dtype)
    x = randn(gen, (r, c), torch.float32, scale=2.0, offset=0.5, outliers=1e-3)
    pick = uniform(gen, (r, c), torch.float32, 0.0, 1.0)
    # Zero fraction rising linearly from 0 (row 0) to 1 (last row); half the zeros are -0.
    zero_frac = torch.linspace(0.0, 1.0, r, device=gen.device).view(r, 1)
    is_zero = uniform(gen, (r, c), torch.float32, 0.0, 1.0) < zero_frac
    signed_zero = torch.where(randint(gen, (r, c), 0, 2) > 0, 0.0, -0.0)
    # Among the non-zeros: 5% subnormals of the dtype (exponent uniform over the subnormal
    # binades, random sign), 1% NaN, 1% +-inf.
    lo = float(torch.log2(torch.tensor(fi.tiny * fi.eps, dtype=torch.float64)))
    hi = float(torch.log2(torch.tensor(fi.tiny, dtype=torch.float64)))
    sub = torch.exp2(uniform(gen, (r, c), torch.float32, lo, hi - 0.5).double()) * torch.sign(x.double())
    xd = torch.where(pick < 0.05, sub, x.double())
    xd = torch.where((pick >= 0.05) & (pick < 0.06), torch.full_like(xd, float("nan")), xd)
    xd = torch.where((pick >= 0.06) & (pick < 0.07), torch.sign(x.double()) * float("inf"), xd)
    xd = torch.where(is_zero, signed_zero.double(), xd)
    return (xd.to(dtype),)


def flops(shape):
    return float(shape["rows"] * shape["cols"])


def nbytes_moved(shape, dtype):
    return float(nbytes((shape["rows"], shape["cols"]), dtype) + nbytes((shape["rows"],), torch.int64))


TASK = Task(
    name="count_nonzero_rows",
    category="reduce",
    description="torch.count_nonzero(x, dim=-1) of [R, C] -> int64 [R]; +-0 are zero, subnormals, NaN and inf are not",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=Exact(description=(
        "exact int64 counts of x != 0 per row: +0 and -0 are zero; subnormals (no flush-to-zero), NaN and +-inf count")),
    flops=flops,
    bytes=nbytes_moved,
)
