"""Mean squared error per row: out[n] = mean_j (pred[n, j] - target[n, j])^2, i.e.
F.mse_loss(pred, target, reduction='none').mean(-1) -> [N] (one loss per sample).

Contract: the default allclose against the float64 computation on the same (rounded) inputs;
half-precision inputs are accumulated in float32 (the reference does so) and the result is
rounded once. Summation-length budget: the D terms are non-negative, so a float32 sum in any
order is within D u relative (worst case, sequential) and typically sqrt(D) u: at D = 3001
(awkward) that is 1.8e-4 worst / 3e-6 typical, at D = 4096 (large) 2.4e-4 / 4e-6. rtol 1e-4 (with
atol 1e-5 x rms) therefore admits every practical order (blocked, tree, atomics) by a wide
typical margin, while one bfloat16 rounding of the inputs (4e-3 of values at ~50, i.e. of the
same order as the differences) does not pass.
Predictions sit close to their targets (per-row error scale 1e-2 .. 1) on top of offsets up to
+-50, so pred - target cancels: differencing in a narrow type loses it all.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform


def reference(pred, target):
    wide = torch.promote_types(pred.dtype, torch.float32)
    loss = torch.nn.functional.mse_loss(pred.to(wide), target.to(wide), reduction="none").mean(dim=-1)
    return loss.to(pred.dtype)


def make_inputs(shape, dtype, gen):
    n, d = shape["N"], shape["D"]
    target = randn(gen, (n, d), torch.float32, scale=2.0) + uniform(gen, (n, 1), torch.float32, -50.0, 50.0)
    err_scale = torch.exp(uniform(gen, (n, 1), torch.float32, -4.6, 0.0))
    pred = target + randn(gen, (n, d), torch.float32, scale=1.0, offset=0.1, outliers=1e-3, outlier_scale=10.0) * err_scale
    return (pred.to(dtype), target.to(dtype))


def flops(shape):
    return 3.0 * shape["N"] * shape["D"]


def nbytes_moved(shape, dtype):
    n, d = shape["N"], shape["D"]
    return float(2 * nbytes((n, d), dtype) + nbytes((n,), dtype))


TASK = Task(
    name="mse_loss",
    category="loss",
    description="per-row mean squared error of pred, target [N, D] -> [N] (reduction: mean over D per sample), predictions close to offset targets",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 64, "D": 1024}, "small"),
        Shape("awkward", {"N": 37, "D": 3001}, "awkward"),
        Shape("large", {"N": 16384, "D": 4096}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
