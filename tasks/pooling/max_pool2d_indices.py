"""2-D max pooling with indices (F.max_pool2d(..., return_indices=True)), kernel 3, stride 2,
padding 1 (implicit -inf padding), as used before max_unpool2d (SegNet).

Contract, written out:
  * values: [N, C, OH, OW], the window maximum (exact: a maximum is one of the inputs)
  * indices: int64 [N, C, OH, OW], the position h * W + w of that maximum within its (n, c) plane
  * tie rule: where several elements of a window equal the maximum, the index is the smallest
    one (the first in row-major order over the window), which is what PyTorch's CPU and CUDA
    kernels produce (they scan rows then columns and replace only on a strictly greater value)
  * comparison: both outputs exact
Ties are built into every input: 25% of elements are copies of their right neighbour, 10% of the
element below, so many windows hold two or more equal maxima (values stay arbitrary float32, not
a coarse grid, so the bf16_compute control still differs).
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randn

KERNEL, STRIDE, PADDING = 3, 2, 1


def out_size(n):
    return (n + 2 * PADDING - KERNEL) // STRIDE + 1


def reference(x):
    return torch.nn.functional.max_pool2d(x, KERNEL, STRIDE, PADDING, return_indices=True)


def make_inputs(shape, dtype, gen):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    # Mostly negative values: padding with 0 instead of -inf changes border maxima.
    x = randn(gen, (n, c, h, w), torch.float32, scale=1.0, offset=-2.5, outliers=1e-3)
    right = torch.rand((n, c, h, w), generator=gen, device=gen.device) < 0.25
    down = torch.rand((n, c, h, w), generator=gen, device=gen.device) < 0.10
    x[..., :-1] = torch.where(right[..., :-1], x[..., 1:], x[..., :-1])
    x[..., :-1, :] = torch.where(down[..., :-1, :], x[..., 1:, :], x[..., :-1, :])
    return (x.to(dtype),)


def flops(shape):
    return 8.0 * shape["N"] * shape["C"] * out_size(shape["H"]) * out_size(shape["W"])


def nbytes_moved(shape, dtype):
    n, c = shape["N"], shape["C"]
    out = (n, c, out_size(shape["H"]), out_size(shape["W"]))
    return float(nbytes((n, c, shape["H"], shape["W"]), dtype) + nbytes(out, dtype) + nbytes(out, torch.int64))


TASK = Task(
    name="max_pool2d_indices",
    category="pooling",
    description="2-D max pooling with indices, kernel 3, stride 2, padding 1, on NCHW: (values, int64 flat h*W+w indices); "
                "ties pick the smallest index",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 16, "H": 32, "W": 32}, "small"),
        Shape("awkward", {"N": 1, "C": 19, "H": 33, "W": 47}, "awkward"),
        # SegNet encoder stage-1 pooling (64 channels at 224 x 224), batch 32: 566 MB of fp32 + int64 traffic.
        Shape("large", {"N": 32, "C": 64, "H": 224, "W": 224}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Exact(description=(
        "exact: values are the window maxima; indices (int64, h*W+w within the plane) exact, ties resolved to the smallest "
        "index (first in row-major window order)")),
    flops=flops,
    bytes=nbytes_moved,
)
