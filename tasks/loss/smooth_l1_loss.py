import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform


def reference(pred, target, beta):
    # Per element (reduction='none'): 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere,
    # d = pred - target (Fast R-CNN box regression loss).
    return torch.nn.functional.smooth_l1_loss(pred, target, reduction="none", beta=beta)


def make_inputs(shape, dtype, gen):
    n, d = shape["N"], shape["D"]
    # Differences spread over both branches (|d| from ~0.01 beta to ~20 beta, half below beta)
    # on top of offset targets, so the difference itself cancels.
    target = randn(gen, (n, d), torch.float32, scale=3.0, offset=1.0)
    spread = torch.exp(uniform(gen, (n, d), torch.float32, -4.6, 2.3))
    pred = target + randn(gen, (n, d), torch.float32, scale=1.0) * spread * 0.5
    return (pred.to(dtype), target.to(dtype), float(shape["beta"]))


def flops(shape):
    return 5.0 * shape["N"] * shape["D"]


def nbytes_moved(shape, dtype):
    return float(3 * nbytes((shape["N"], shape["D"]), dtype))


TASK = Task(
    name="smooth_l1_loss",
    category="loss",
    description="element-wise smooth L1 (Huber-type) loss of pred, target [N, D] with a beta scalar, reduction='none'",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 256, "D": 4, "beta": 0.5}, "small"),          # box deltas (x, y, w, h)
        Shape("awkward", {"N": 1001, "D": 7, "beta": 1.0 / 9.0}, "awkward"),  # Detectron's beta = 1/9
        Shape("large", {"N": 2**24, "D": 4, "beta": 1.0}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
