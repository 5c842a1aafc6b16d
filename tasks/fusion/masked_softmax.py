import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randint, randn


def reference(scores, mask):
    z = scores + mask  # mask [B, 1, S, S] broadcasts over heads
    p = torch.softmax(z, dim=-1)
    # A row whose every key is masked (-inf) has no distribution: softmax gives NaN there; the
    # defined output is all zeros (what attention kernels write, so the row adds nothing).
    fully_masked = torch.isneginf(z).all(dim=-1, keepdim=True)
    return p.masked_fill(fully_masked, 0.0)


def make_inputs(shape, dtype, gen):
    b, h, s = shape["batch"], shape["heads"], shape["seq"]
    scores = randn(gen, (b, h, s, s), dtype, scale=2.0, offset=0.5, outliers=1e-3, outlier_scale=8.0)
    # Additive mask as built for a left-padded batch: a finite position bias where key k is
    # visible to query q (k <= q and k past the padding), -inf elsewhere. Every sequence has at
    # least one pad token, so query rows inside the padding are fully masked.
    pad = randint(gen, (b,), 1, max(2, s // 2))
    q = torch.arange(s, device=gen.device).view(1, s, 1)
    k = torch.arange(s, device=gen.device).view(1, 1, s)
    visible = (k <= q) & (k >= pad.view(b, 1, 1))
    bias = randn(gen, (b, 1, s, s), torch.float32, scale=0.5)
    mask = torch.where(visible.unsqueeze(1), bias, torch.full_like(bias, float("-inf"))).to(dtype)
    return (scores, mask)


def flops(shape):
    return 5.0 * shape["batch"] * shape["heads"] * shape["seq"] ** 2  # add, max, sub + exp, sum, scale


def nbytes_moved(shape, dtype):
    b, h, s = shape["batch"], shape["heads"], shape["seq"]
    return float(2 * nbytes((b, h, s, s), dtype) + nbytes((b, 1, s, s), dtype))


TASK = Task(
    name="masked_softmax",
    category="fusion",
    description="p = softmax(scores + mask, dim=-1), scores [B, H, S, S], additive mask [B, 1, S, S] (finite bias where visible, -inf for causal and left padding); fully masked rows output zeros",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"batch": 2, "heads": 4, "seq": 64}, "small"),
        # One head, an odd sequence length: rows end inside a block and the tail is masked.
        Shape("awkward", {"batch": 3, "heads": 1, "seq": 77}, "awkward"),
        Shape("large", {"batch": 4, "heads": 32, "seq": 1024}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
