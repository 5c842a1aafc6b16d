"""Local response normalisation across channels (AlexNet; F.local_response_norm semantics), with
AlexNet's parameters size = 5, alpha = 1e-4, beta = 0.75, k = 2:

    y[n, c] = x[n, c] / (k + alpha / size * sum_{c' = c-2}^{c+2} x[n, c']^2) ^ beta

The window is clipped at the first and last channel (zero padding) and the sum is divided by
size = 5 even there (PyTorch's definition). Inputs are at the scale of AlexNet's first conv
activations (std 30, offset 5, outliers): the neighbourhood term is 2-5% of k on typical
elements and dominates k around outliers, so a kernel that ignores it, gets the window wrong or
divides by the clipped count fails.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

SIZE, ALPHA, BETA, K = 5, 1e-4, 0.75, 2.0


def reference(x):
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32  # opmath for half types
    xf = x.to(acc)
    sq = xf.square()
    c = x.shape[1]
    half = SIZE // 2
    padded = torch.nn.functional.pad(sq, (0, 0, 0, 0, half, (SIZE - 1) // 2))
    window = sum(padded[:, i:i + c] for i in range(SIZE))
    return (xf / (K + (ALPHA / SIZE) * window).pow(BETA)).to(x.dtype)


def make_inputs(shape, dtype, gen):
    n, c, h, w = shape["N"], shape["C"], shape["H"], shape["W"]
    return (randn(gen, (n, c, h, w), dtype, scale=30.0, offset=5.0, outliers=2e-3, outlier_scale=20.0),)


def flops(shape):
    # square, 5-term window sum, scale + add, pow (~2), divide
    return 10.0 * shape["N"] * shape["C"] * shape["H"] * shape["W"]


def nbytes_moved(shape, dtype):
    return float(2 * nbytes((shape["N"], shape["C"], shape["H"], shape["W"]), dtype))


TASK = Task(
    name="local_response_norm",
    category="normalization",
    description="cross-channel local response norm on NCHW (size 5, alpha 1e-4, beta 0.75, k 2; window clipped at the "
                "channel edges, divided by 5)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 2, "C": 16, "H": 8, "W": 8}, "small"),
        # Fewer channels (3) than the window: every window is clipped on one side or both.
        Shape("awkward", {"N": 1, "C": 3, "H": 13, "W": 7}, "awkward"),
        # AlexNet conv1 output (96 channels at 55 x 55), batch 256: 595 MB of fp32 traffic.
        Shape("large", {"N": 256, "C": 96, "H": 55, "W": 55}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
