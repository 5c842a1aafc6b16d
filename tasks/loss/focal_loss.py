"""Sigmoid focal loss (RetinaNet; torchvision.ops.sigmoid_focal_loss), per element:
  p = sigmoid(x), ce = BCE-with-logits(x, t), p_t = p t + (1 - p)(1 - t),
  loss = alpha_t ce (1 - p_t)^gamma, alpha_t = alpha t + (1 - alpha)(1 - t), alpha = 0.25, gamma = 2
reduction='none'. Contract: the default allclose against the float64 formula on the same
(rounded) inputs (half types computed in float32, rounded once). ce must be computed stably: the
logits reach about +-100, where log(sigmoid(x)) computed literally is -inf.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn, uniform

ALPHA, GAMMA = 0.25, 2.0


def reference(logits, target):
    wide = torch.promote_types(logits.dtype, torch.float32)
    x, t = logits.to(wide), target.to(wide)
    p = torch.sigmoid(x)
    ce = torch.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="none")
    p_t = p * t + (1 - p) * (1 - t)
    loss = ce * (1 - p_t) ** GAMMA
    alpha_t = ALPHA * t + (1 - ALPHA) * (1 - t)
    return (alpha_t * loss).to(logits.dtype)


def make_inputs(shape, dtype, gen):
    n, c = shape["N"], shape["C"]
    # Logits around RetinaNet's prior bias -log((1 - 0.01) / 0.01) = -4.6, spread 4, outliers to
    # about +-100; 5% positive targets (one-hot-ish, as anchors matched to objects).
    logits = randn(gen, (n, c), torch.float32, scale=4.0, offset=-4.6, outliers=2e-3, outlier_scale=20.0)
    target = (uniform(gen, (n, c), torch.float32, 0.0, 1.0) < 0.05).to(torch.float32)
    # Some confident mistakes, where the loss is large: positives with very negative logits.
    logits = torch.where((target > 0) & (uniform(gen, (n, c), torch.float32, 0.0, 1.0) < 0.2), logits - 10.0, logits)
    return (logits.to(dtype), target.to(dtype))


def flops(shape):
    return 15.0 * shape["N"] * shape["C"]


def nbytes_moved(shape, dtype):
    return float(3 * nbytes((shape["N"], shape["C"]), dtype))


TASK = Task(
    name="focal_loss",
    category="loss",
    description="element-wise sigmoid focal loss (alpha 0.25, gamma 2) of logits, binary targets [N, C], reduction='none'",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 1024, "C": 80}, "small"),
        Shape("awkward", {"N": 1001, "C": 3}, "awkward"),
        # RetinaNet at 800 x 1333: 9 anchors on P3-P7 (100x167 + 50x84 + 25x42 + 13x21 + 7x11
        # locations) = 200,700 anchors x 80 COCO classes, batch 4.
        Shape("large", {"N": 4 * 200700, "C": 80}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
