import torch

from mkbench import Shape, Task
from mkbench.contracts import RoundingBound
from mkbench.taskkit import nbytes, randint, randn


def reference(scores, mask):
    z = scores + mask  # mask [B, 1, S, S] broadcasts over heads
    p = torch.softmax(z, dim=-1)
    # A row whose every key is masked (-inf) has no distribution: softmax gives NaN there; the
    # defined output is all zeros (what attention kernels write, so the row adds nothing).
    fully_masked = torch.isneginf(z).all(dim=-1, keepdim=True)
    return p.masked_fill(fully_masked, 0.0)


def rounding_magnitude(scores, mask):
    """First-order error analysis of eager, which rounds z = scores + mask to the task's dtype
    (error u|z_j|, u the unit roundoff), then computes the softmax in float32 and rounds p once:
    dp_i/dz_j = p_i (delta_ij - p_j), so the first rounding moves p_i by at most
    u p_i (|z_i| + sum_j p_j |z_j|), the second by u p_i:
        |p_eager - p| <= u p_i (1 + |z_i| + sum_j p_j |z_j|)
    Logits reach ~20 (scale 2 with 8x outliers, plus the bias), so on rows with few visible keys
    (p_i near 1) that is up to ~40 u p_i: 0.16 p_i at bfloat16, 8x its rtol; on an H200 eager
    bfloat16 missed the default tolerance on 892 of 134M elements (max error 0.0244)."""
    z = scores + mask
    p = reference(scores, mask)
    az = torch.where(torch.isfinite(z), z.abs(), torch.zeros_like(z))
    return (p * (1 + az + (p * az).sum(dim=-1, keepdim=True)),)


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
    # slack 2: first order, one rounding per op counted (eager's float32 max/exp/sum inside the
    # softmax add a few 2^-24 relative); 2x keeps a faithful kernel off the edge. At float32
    # (u = 2^-24) the allowance is ~40 x 2^-24 p_i, far under what bf16_compute misses by.
    contract=RoundingBound(magnitudes=rounding_magnitude, slack=2.0, description=(
        "allclose vs float64 (default tolerances, atol x rms) plus 2 u p_i (1 + |z_i| + sum_j p_j |z_j|), z = scores + "
        "mask: the first-order error of rounding z and p to the output dtype; NaN/Inf positions must match")),
    flops=flops,
    bytes=nbytes_moved,
)
