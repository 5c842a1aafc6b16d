import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn


def reference(a, gate, bias_a, bias_gate):
    # The GLU of Dauphin et al. (2017), "Language Modeling with Gated Convolutional Networks":
    # (X W + b) * sigmoid(X V + c), here the epilogue after both projections (as in the Conformer
    # convolution module's pointwise conv + GLU): the two bias adds, the sigmoid and the product in
    # one pass.
    return (a + bias_a) * torch.sigmoid(gate + bias_gate)


def make_inputs(shape, dtype, gen):
    t, n = shape["tokens"], shape["features"]
    a = randn(gen, (t, n), dtype, scale=1.5, offset=0.2, outliers=1e-3)
    # Gate pre-activations spread over the whole sigmoid: linear near 0 and saturated at both ends;
    # the 20x outliers reach |g| ~ 100, where a naive 1 / (1 + exp(-g)) overflows exp(-g) (float16
    # beyond |g| ~ 11, float32 beyond ~ 88) and must still give 0, not NaN.
    gate = randn(gen, (t, n), dtype, scale=3.0, offset=-0.5, outliers=2e-3)
    bias_a = randn(gen, (n,), dtype, scale=0.5, offset=0.1)
    bias_gate = randn(gen, (n,), dtype, scale=1.0)
    return (a, gate, bias_a, bias_gate)


def flops(shape):
    return 7.0 * shape["tokens"] * shape["features"]  # two adds, sigmoid (exp, add, divide) as ~4, product


def nbytes_moved(shape, dtype):
    t, n = shape["tokens"], shape["features"]
    return float(3 * nbytes((t, n), dtype) + 2 * nbytes((n,), dtype))


TASK = Task(
    name="glu_sigmoid",
    category="fusion",
    description="GLU epilogue: y = (a + b_a) * sigmoid(g + b_g), a and g [T, N], biases [N] broadcast over rows; one memory-bound fused pass",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"tokens": 64, "features": 1024}, "small"),
        # One token (a decode step) and an odd feature count: the bias index and the tail are masked.
        Shape("awkward", {"tokens": 1, "features": 4099}, "awkward"),
        # The Conformer convolution module's pointwise conv + GLU (d = 512, Conformer-L) over
        # 64 utterances x 4096 frames: a and g read, y written, 1.5 GiB in float32.
        Shape("large", {"tokens": 262144, "features": 512}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
