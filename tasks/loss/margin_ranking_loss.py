import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randint, randn, uniform


def reference(x1, x2, y, margin):
    # Per element (reduction='none'): max(0, -y (x1 - x2) + margin), y in {-1, +1}.
    return torch.nn.functional.margin_ranking_loss(x1, x2, y, margin=margin, reduction="none")


def make_inputs(shape, dtype, gen):
    n = shape["N"]
    # Scores of ranked pairs on a shared offset (~10), differing by O(margin): about half the
    # pairs are inside the hinge (positive loss), half satisfied (exact 0).
    base = randn(gen, (n,), torch.float32, scale=3.0, offset=10.0)
    x1 = base + randn(gen, (n,), torch.float32, scale=0.8, outliers=1e-3)
    x2 = base + randn(gen, (n,), torch.float32, scale=0.8, outliers=1e-3)
    y = (randint(gen, (n,), 0, 2, torch.float32) * 2 - 1)
    margin = float(uniform(gen, (1,), torch.float32, 0.2, 0.8))
    return (x1.to(dtype), x2.to(dtype), y.to(dtype), margin)


def flops(shape):
    return 4.0 * shape["N"]


def nbytes_moved(shape, dtype):
    return float(4 * nbytes((shape["N"],), dtype))


TASK = Task(
    name="margin_ranking_loss",
    category="loss",
    description="element-wise margin ranking loss max(0, -y (x1 - x2) + margin) of [N] scores, labels y in {-1, +1}, reduction='none'",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 65536}, "small"),
        Shape("awkward", {"N": 100003}, "awkward"),
        Shape("large", {"N": 2**26}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
