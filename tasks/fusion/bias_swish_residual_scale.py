import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(x, bias, gamma, residual):
    # The epilogue of a residual branch with a per-channel LayerScale (as introduced by CaiT and
    # used in ConvNeXt and DINOv2) whose output goes through a bias and a Swish/SiLU: bias add,
    # activation, the learned per-channel scale gamma and the residual add, in one pass.
    return residual + gamma * torch.nn.functional.silu(x + bias)


def make_inputs(shape, dtype, gen):
    r, c = shape["rows"], shape["cols"]
    x = randn(gen, (r, c), dtype, scale=2.0, offset=-0.3, outliers=1e-3)
    bias = randn(gen, (c,), dtype, scale=0.5)
    # Trained LayerScale values: signed, O(0.1 .. 1), so the branch is not negligible next to the
    # residual (a kernel returning the residual unchanged must fail by far).
    gamma = randn(gen, (c,), dtype, scale=0.5, offset=0.3)
    residual = randn(gen, (r, c), dtype, scale=1.0, offset=0.1, outliers=1e-3, outlier_scale=10.0)
    return (x, bias, gamma, residual)


def flops(shape):
    return 8.0 * shape["rows"] * shape["cols"]  # bias add, SiLU (~5), scale, residual add


def nbytes_moved(shape, dtype):
    r, c = shape["rows"], shape["cols"]
    return float(3 * nbytes((r, c), dtype) + 2 * nbytes((c,), dtype))


TASK = Task(
    name="bias_swish_residual_scale",
    category="fusion",
    description="residual branch epilogue with LayerScale: y = residual + gamma * silu(x + bias), x and residual [R, C], bias and gamma [C] broadcast over rows",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"rows": 64, "cols": 768}, "small"),
        # Odd row count and a row length that is neither a power of two nor a multiple of 8.
        Shape("awkward", {"rows": 37, "cols": 1001}, "awkward"),
        # A ViT-g/14 width (1536, DINOv2's giant) over 64 images x 1025 tokens: x and residual
        # read, y written, 1.1 GiB in float32.
        Shape("large", {"rows": 65600, "cols": 1536}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
