import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randn

EPS = 1e-5


def reference(x, residual, weight, bias):
    h = x + residual  # the updated residual stream, returned for the next block
    return torch.nn.functional.layer_norm(h, (h.shape[-1],), weight, bias, EPS), h


def make_inputs(shape, dtype, gen):
    t, d = shape["tokens"], shape["hidden"]
    f32 = torch.float32
    x = randn(gen, (t, d), dtype, scale=0.5, offset=0.05)  # the sublayer output being added
    # Residual streams drift: each row has its own mean (|mean| up to 2) and scale, and a few
    # channels are 30x larger than the rest, so the centring matters. The mean stays within a few
    # standard deviations: a bfloat16 pipeline that rounds h before normalising (eager PyTorch)
    # errs by ulp(|h|) / std, which must stay inside bfloat16's tolerance.
    # The bound on the mean is enforced: unbounded, the large shape's 16384 rows reached |mean| 3-4.4 in most seeds,
    # and eager bfloat16 then left the contract in 14 of 3846 seeds (by up to 1.11x the bound), each time in a row
    # with |mean| over 3 and over 3 std; seeds whose worst row had |mean| 2-3 reached 0.96x, under 2 0.68x
    # (one H200, reports/2026-11-28-bf16-edge).
    row_offset = randn(gen, (t, 1), f32, scale=1.0).clamp(-2.0, 2.0)
    row_scale = randn(gen, (t, 1), f32).abs() + 0.75
    residual = (randn(gen, (t, d), f32, outliers=2e-3, outlier_scale=30.0) * row_scale + row_offset).to(dtype)
    weight = randn(gen, (d,), dtype, scale=0.25, offset=1.0)
    bias = randn(gen, (d,), dtype, scale=0.5)
    return (x, residual, weight, bias)


def flops(shape):
    return 9.0 * shape["tokens"] * shape["hidden"]  # add, mean, centred square-sum, normalise, affine


def nbytes_moved(shape, dtype):
    t, d = shape["tokens"], shape["hidden"]
    return float(4 * nbytes((t, d), dtype) + 2 * nbytes((d,), dtype))


TASK = Task(
    name="add_layernorm",
    category="fusion",
    description="residual add + LayerNorm: h = x + residual; y = LayerNorm(h; gamma, beta, eps=1e-5) over the last dim "
                "of [T, D]; returns (y, h)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"tokens": 64, "hidden": 1024}, "small"),
        # Falcon-7B's hidden size 4544 (not a power of two: a masked tail) over an odd token count.
        Shape("awkward", {"tokens": 5, "hidden": 4544}, "awkward"),
        # GPT-J-6B / OPT-6.7B hidden size 4096 over 16384 tokens.
        Shape("large", {"tokens": 16384, "hidden": 4096}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
