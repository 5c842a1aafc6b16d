import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import randint


def reference(labels, num_classes):
    return torch.nn.functional.one_hot(labels, num_classes)


def make_inputs(shape, dtype, gen):
    n, c = shape["N"], shape["C"]
    labels = randint(gen, (n,), 0, c)
    labels[0] = c - 1  # both extreme classes always occur
    labels[n // 2] = 0
    return (labels, c)


def flops(shape):
    return 0.0


def bytes_moved(shape, dtype):
    # int64 labels in, int64 [N, C] out, whatever the dtype argument says.
    n, c = shape["N"], shape["C"]
    return float(8 * n + 8 * n * c)


TASK = Task(
    name="one_hot",
    category="index",
    description="F.one_hot(labels, num_classes): int64 labels [N] in [0, C) -> int64 [N, C] with a single 1 per row",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 1024, "C": 100}, "small"),
        Shape("awkward", {"N": 1001, "C": 7}, "awkward"),
        # ImageNet-1k targets for 65536 samples: 524 MB of int64 output.
        Shape("large", {"N": 65536, "C": 1000}, "large"),
    ],
    # The task has no floating data: labels and output are int64.
    dtypes=("int64",),
    contract=Exact(description="exact: out[i, labels[i]] = 1, every other element 0, int64 [N, C]"),
    flops=flops,
    bytes=bytes_moved,
)
