"""Euclidean norm of each row, without overflow or underflow: out[r] = sqrt(sum_j x[r, j]^2).

Contract (relative per row: norms span ~2^-100 .. 2^100 across rows): |out - ref| <= rtol |ref|
against the float64 norm of the same (rounded) input, no absolute slack (an all-zero row must
give exactly 0). rtol float32 1e-4: the sum of C positive squares in float32 has a relative error
of at most C u (sequential order; 1.8e-4 at C = 3001, halved by the square root) and typically
sqrt(C) u (3e-6); bfloat16 2e-2 (the default: one rounding of the output is 3.9e-3).
Row scales are log-uniform over 2^-100 .. 2^100: x^2 overflows float32 for |x| > 1.8e19 and
underflows for |x| < 1e-23, so sqrt(sum(x^2)) in float32 returns inf or 0 on about half of the
rows. A kernel must scale (e.g. by the row's max |x|, or by a power of two) before squaring.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose, Tol
from mkbench.taskkit import nbytes, randn, uniform

TOLERANCES = {"float32": Tol(1e-4, 0.0), "bfloat16": Tol(2e-2, 0.0)}


def reference(x):
    # Scaled by each row's max |x| (torch's float32 vector_norm does not scale and overflows).
    wide = torch.promote_types(x.dtype, torch.float32)
    xw = x.to(wide)
    amax = xw.abs().amax(dim=-1, keepdim=True)
    s = torch.where(amax > 0, amax, torch.ones_like(amax))
    return (torch.linalg.vector_norm(xw / s, dim=-1) * s.squeeze(-1)).to(x.dtype)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    row_scale = torch.exp2(uniform(gen, (r, 1), torch.float32, -100.0, 100.0))
    x = randn(gen, (r, c), torch.float32, scale=1.0, offset=0.1, outliers=1e-3, outlier_scale=10.0) * row_scale
    x[r // 2] = 0.0  # an all-zero row: norm exactly 0, no 0 / 0
    return (x.to(dtype),)


def flops(shape):
    return 2.0 * shape["rows"] * shape["cols"]


def nbytes_moved(shape, dtype):
    return float(nbytes((shape["rows"], shape["cols"]), dtype) + nbytes((shape["rows"],), dtype))


TASK = Task(
    name="l2_norm_rows",
    category="reduce",
    description="Euclidean norm of each row of [R, C] -> [R], rows scaled from 2^-100 to 2^100 (no overflow/underflow allowed), one all-zero row",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 1024}, "small"),
        Shape("awkward", {"rows": 37, "cols": 3001}, "awkward"),
        Shape("large", {"rows": 16384, "cols": 8192}, "large"),
    ],
    # No float16: its range (6e-5 .. 65504) leaves no room for scaled rows.
    dtypes=("float32", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES, scale="abs"),
    flops=flops,
    bytes=nbytes_moved,
)
