import torch

from mkbench import Shape, Task
from mkbench.contracts import RoundingBound
from mkbench.taskkit import itemsize, randn


def reference(expert_out, row_index, weights):
    # expert_out [T*k, H] in expert-contiguous (permuted) order; row_index[t, j] is the row of
    # expert_out holding token t's j-th expert output; weights [T, k] are the gating weights.
    # y[t] = sum_j weights[t, j] * expert_out[row_index[t, j]], summed in the order j = 0..k-1
    # (any order is within tolerance).
    return (weights.unsqueeze(-1) * expert_out[row_index]).sum(dim=1)


def rounding_magnitude(expert_out, row_index, weights):
    """The first-order rounding error of eager at the output dtype, per output element. Eager
    multiplies in the output dtype, rounding each product p_j = w_j x_j (u |p_j|), then sums the k
    products in float32 and rounds y once (u |y|, inside rtol): so |y_eager - y| <= u sum_j |w_j x_j|
    to first order, whatever the order of the sum. Where two experts' outputs cancel (an outlier of
    ~10-30 against another of the other sign), sum_j |w_j x_j| is ten times |y| and more: on an H200,
    eager bfloat16 was off by 0.025 (got -0.281, expected -0.256) on 1 of 67M elements of the large
    shape, above the default bound (2e-2 rms + 2e-2 |y|) and within this one."""
    return ((weights.unsqueeze(-1) * expert_out[row_index]).abs().sum(dim=1),)


def make_inputs(shape, dtype, gen):
    t, e, k, h = shape["tokens"], shape["experts"], shape["k"], shape["hidden"]
    # Top-k expert ids from skewed router scores (some experts popular, some idle), then the
    # stable expert-major permutation a permute kernel produces; row_index is its inverse.
    popularity = randn(gen, (1, e), torch.float32, scale=1.0)
    scores = randn(gen, (t, e), torch.float32, scale=1.0) + popularity
    top = torch.topk(scores, k, dim=-1)
    order = torch.argsort(top.indices.flatten(), stable=True)  # permuted row p holds flat slot order[p]
    row_index = torch.empty_like(order)
    row_index[order] = torch.arange(t * k, device=gen.device)
    row_index = row_index.view(t, k)
    # Gating weights: softmax over the k selected scores (positive, sum to 1, unequal).
    weights = torch.softmax(top.values * 2.0, dim=-1).to(dtype)
    expert_out = randn(gen, (t * k, h), dtype, scale=1.0, offset=0.1, outliers=1e-3, outlier_scale=10.0)
    return (expert_out, row_index, weights)


def flops(shape):
    return 2.0 * shape["tokens"] * shape["k"] * shape["hidden"]


def nbytes_moved(shape, dtype):
    t, k, h = shape["tokens"], shape["k"], shape["hidden"]
    return float((t * k * h + t * h + t * k) * itemsize(dtype) + t * k * itemsize(torch.int64))


TASK = Task(
    name="moe_unpermute_combine",
    category="fusion",
    description="MoE combine: y[t] = sum_j w[t, j] * expert_out[row_index[t, j]], expert_out [T*k, H] in expert-contiguous order, int64 row_index [T, k] (a permutation), gating weights [T, k]; back to token order",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        # Mixtral: 8 experts, top-2.
        Shape("small", {"tokens": 64, "experts": 8, "k": 2, "hidden": 256}, "small"),
        # DeepSeek-V2-Lite routing (64 experts, top-6) over an odd token count and an odd hidden size.
        Shape("awkward", {"tokens": 37, "experts": 64, "k": 6, "hidden": 129}, "awkward"),
        # Mixtral-8x7B (hidden 4096, top-2) over 16384 tokens: 512 MiB of expert outputs read, 256 MiB written.
        Shape("large", {"tokens": 16384, "experts": 8, "k": 2, "hidden": 4096}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # slack 2 as in bias_swish_residual_scale: first order, one rounding per op; float32 gets the same
    # bound at u = 2^-24, where the bf16_compute control (2^-8) is still rejected by far.
    contract=RoundingBound(magnitudes=rounding_magnitude, slack=2.0, description=(
        "allclose vs float64 (default tolerances, atol x rms) plus 2 u sum_j |w_j x_j|: the rounding of "
        "each of the k weighted products in the output dtype")),
    flops=flops,
    bytes=nbytes_moved,
)
