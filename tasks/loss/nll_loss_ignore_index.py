"""Semantic-segmentation NLL with an ignore label, averaged per image:
out[b] = sum_{h,w: t != ignore} -logp[b, t[b,h,w], h, w] / #{h,w: t[b,h,w] != ignore} -> [B].

That is F.nll_loss(logp, target, ignore_index=ignore, reduction='mean') applied to each image
separately (reduction: mean over the non-ignored pixels of each image). An image whose every pixel
is ignored has 0 / 0 = NaN, as torch's 'mean' gives; the awkward shape holds one, and its NaN must
be reproduced. Contract: the default allclose against the float64 computation on the same
(rounded) inputs (half types accumulated in float32, rounded once). Summation-length budget: the
terms are non-negative, so float32 sums over up to H W = 2^21 pixels have a typical relative error
of sqrt(H W) u <= 8.7e-5, inside rtol 1e-4 for any summation order; the count is exact.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, nbytes, randint, randn, uniform

IGNORE = 255  # the Cityscapes / ADE20K convention


def reference(logp, target, ignore_index):
    wide = torch.promote_types(logp.dtype, torch.float32)
    per_pixel = torch.nn.functional.nll_loss(logp.to(wide), target, ignore_index=ignore_index, reduction="none")
    count = (target != ignore_index).sum(dim=(1, 2)).to(wide)
    return (per_pixel.sum(dim=(1, 2)) / count).to(logp.dtype)


def make_inputs(shape, dtype, gen):
    b, c, h, w = shape["B"], shape["C"], shape["H"], shape["W"]
    # Per-image logit scales spread from 0.5 (uncertain, loss ~ log C) to 6 (sharp, loss ~ 10):
    # the per-image losses differ, so one shared value cannot pass for all of them.
    temperature = torch.linspace(0.5, 6.0, b, device=gen.device).view(b, 1, 1, 1)
    logits = randn(gen, (b, c, h, w), torch.float32, scale=1.0, outliers=1e-3) * temperature
    logp = torch.log_softmax(logits, dim=1).to(dtype)  # float32: the large shape's logits are 3.8 GB
    target = randint(gen, (b, h, w), 0, c)
    # 10% ignored pixels, plus a whole ignored image (the second one) when the batch has several.
    target = torch.where(uniform(gen, (b, h, w), torch.float32, 0.0, 1.0) < 0.1, torch.full_like(target, IGNORE), target)
    if shape.params.get("ignore_image") is not None:
        target[shape["ignore_image"]] = IGNORE
    return (logp, target, IGNORE)


def flops(shape):
    return 2.0 * shape["B"] * shape["H"] * shape["W"]


def nbytes_moved(shape, dtype):
    # Compulsory traffic: the target of every pixel and one gathered log-probability per pixel.
    b, h, w = shape["B"], shape["H"], shape["W"]
    return float(b * h * w * (itemsize(dtype) + itemsize(torch.int64)) + nbytes((b,), dtype))


def resident_bytes(shape, dtype):
    # What the inputs and the output occupy: the whole log-prob tensor, C = 19 times what is gathered
    # from it. At the large shape that is 3.94 GiB at float32 where nbytes_moved counts 0.56 GiB, and the
    # memory budget, scaling the traffic, planned 8.5 GiB for a unit whose judge alone held 18.5 GiB
    # (the README main job on 4 H200s, reports/2026-11-27-main-job).
    b, c, h, w = shape["B"], shape["C"], shape["H"], shape["W"]
    return float(nbytes((b, c, h, w), dtype) + nbytes((b, h, w), torch.int64) + nbytes((b,), dtype))


TASK = Task(
    name="nll_loss_ignore_index",
    category="loss",
    description="per-image mean NLL of log-probs [B, C, H, W] at int64 targets [B, H, W], pixels labelled 255 ignored; all-ignored image -> NaN",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"B": 4, "C": 19, "H": 32, "W": 32}, "small"),
        Shape("awkward", {"B": 3, "C": 5, "H": 17, "W": 33, "ignore_image": 1}, "awkward"),
        # Cityscapes at full resolution (19 classes, 1024 x 2048), batch 24.
        Shape("large", {"B": 24, "C": 19, "H": 1024, "W": 2048}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
    resident_bytes=resident_bytes,
)
