import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, nbytes, randn, uniform


def reference(logits, target, pos_weight):
    # Per element (reduction='none'), multi-label with a per-class positive weight [C]:
    # -(pos_weight[c] t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))), computed stably.
    # Half types are widened to float32 and the result rounded once (torch's CPU kernel rounds
    # its intermediates to bfloat16, which alone exceeds the bfloat16 tolerance on large logits).
    wide = torch.promote_types(logits.dtype, torch.float32)
    loss = torch.nn.functional.binary_cross_entropy_with_logits(
        logits.to(wide), target.to(wide), pos_weight=pos_weight.to(wide), reduction="none")
    return loss.to(logits.dtype)


def make_inputs(shape, dtype, gen):
    n, c = shape["N"], shape["C"]
    # Logits with outliers out to about +-150: log(sigmoid(x)) computed literally is -inf below
    # x ~ -88 (float32), and log(1 - sigmoid(x)) already at x > 17 (1 - sigmoid rounds to 0).
    logits = randn(gen, (n, c), dtype, scale=6.0, offset=-1.0, outliers=5e-3, outlier_scale=20.0)
    # Half hard labels {0, 1}, half soft labels (label smoothing / distillation) in [0, 1].
    hard = (uniform(gen, (n, c), torch.float32, 0.0, 1.0) < 0.3).to(torch.float32)
    soft = uniform(gen, (n, c), torch.float32, 0.0, 1.0)
    target = torch.where(uniform(gen, (n, c), torch.float32, 0.0, 1.0) < 0.5, hard, soft).to(dtype)
    pos_weight = uniform(gen, (c,), dtype, 0.5, 4.0)
    return (logits, target, pos_weight)


def flops(shape):
    return 8.0 * shape["N"] * shape["C"]


def nbytes_moved(shape, dtype):
    n, c = shape["N"], shape["C"]
    return float(3 * nbytes((n, c), dtype) + c * itemsize(dtype))


TASK = Task(
    name="bce_with_logits",
    category="loss",
    description="element-wise binary cross entropy with logits [N, C], soft/hard targets [N, C] and per-class pos_weight [C], reduction='none'",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 64, "C": 1000}, "small"),
        Shape("awkward", {"N": 33, "C": 4097}, "awkward"),
        Shape("large", {"N": 8192, "C": 8192}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
