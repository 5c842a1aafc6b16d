import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

KERNEL, STRIDE, PADDING = 4, 2, 1


def out_size(n):
    return (n + 2 * PADDING - KERNEL) // STRIDE + 1


def reference(x):
    return torch.nn.functional.max_pool1d(x, KERNEL, STRIDE, PADDING)


def make_inputs(shape, dtype, gen):
    # Mostly negative values: a kernel that pads with 0 instead of -inf gets the border wrong.
    return (randn(gen, (shape["N"], shape["C"], shape["L"]), dtype, scale=1.0, offset=-2.5, outliers=1e-3),)


def flops(shape):
    return 3.0 * shape["N"] * shape["C"] * out_size(shape["L"])  # 3 comparisons per window


def nbytes_moved(shape, dtype):
    n, c = shape["N"], shape["C"]
    return float(nbytes((n, c, shape["L"]), dtype) + nbytes((n, c, out_size(shape["L"])), dtype))


TASK = Task(
    name="max_pool1d",
    category="pooling",
    description="1-D max pooling on [N, C, L], kernel 4, stride 2, padding 1 (implicit -inf padding); "
                "output length (L - 2) // 2 + 1",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 16, "L": 1024}, "small"),
        # Odd length: the last window ends inside the padding.
        Shape("awkward", {"N": 3, "C": 5, "L": 37}, "awkward"),
        # 256 channels over 16384 time steps, batch 32: 805 MB of fp32 traffic.
        Shape("large", {"N": 32, "C": 256, "L": 16384}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
