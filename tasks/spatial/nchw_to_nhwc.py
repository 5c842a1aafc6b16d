from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import nbytes, randn


def reference(x):
    return x.permute(0, 2, 3, 1).contiguous()


def make_inputs(shape, dtype, gen):
    return (randn(gen, (shape["N"], shape["C"], shape["H"], shape["W"]), dtype, scale=2.0, offset=0.5, outliers=1e-3),)


def flops(shape):
    return 0.0


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["N"], shape["C"], shape["H"], shape["W"]), dtype))


TASK = Task(
    name="nchw_to_nhwc",
    category="spatial",
    description="layout transpose NCHW -> NHWC: out[n, h, w, c] = x[n, c, h, w], a contiguous [N, H, W, C] tensor",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 32, "H": 16, "W": 16}, "small"),
        # Three channels (an RGB image batch) and odd spatial sizes: the transposed tile is ragged.
        Shape("awkward", {"N": 1, "C": 3, "H": 33, "W": 17}, "awkward"),
        # ResNet-50 layer1 activations (256 channels at 56 x 56), batch 128: 822 MB of fp32 traffic.
        Shape("large", {"N": 128, "C": 256, "H": 56, "W": 56}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Exact(),
    flops=flops,
    bytes=nbytes_moved,
)
