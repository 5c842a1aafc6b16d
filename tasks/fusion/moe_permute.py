"""MoE dispatch: gather each token's hidden state once per selected expert into expert-contiguous
order, as grouped-GEMM MoE layers (MegaBlocks, vLLM fused_moe, TransformerEngine moe_permute) do.

Contract, written out:
  * inputs: x [T, H]; expert_ids int64 [T, k], the k distinct experts of each token (from a top-k
    router, unsorted within a token); num_experts E (int)
  * tokens_per_expert: int64 [E], the number of (token, slot) pairs routed to each expert; exact
  * segments: expert e owns rows [off_e, off_e + tokens_per_expert[e]) of the output, with
    off_e = sum of tokens_per_expert[:e] (experts in increasing id order, empty experts allowed)
  * row_index: int64 [T, k], the output row of token t's j-th slot; it must be a permutation of
    0 .. T*k - 1 and row_index[t, j] must lie in the segment of expert_ids[t, j]. The order of
    rows inside a segment is free (the reference orders them by flat slot t*k + j, a stable sort;
    an atomic-counter kernel may not), so it is checked as a property, not against the reference
  * permuted: [T*k, H] in x's dtype, permuted[row_index[t, j]] == x[t] bit for bit (a copy: no
    arithmetic, so no tolerance)
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import CheckResult, Custom, compare_exact
from mkbench.taskkit import itemsize, randn


def reference(x, expert_ids, num_experts):
    t, k = expert_ids.shape
    flat = expert_ids.flatten()
    order = torch.argsort(flat, stable=True)  # output row p holds flat slot order[p]
    row_index = torch.empty_like(order)
    row_index[order] = torch.arange(t * k, device=x.device)
    counts = torch.bincount(flat, minlength=num_experts)
    return x[order // k], row_index.view(t, k), counts


def check(ctx):
    x, expert_ids, num_experts = ctx.inputs
    permuted, row_index, counts = ctx.outputs
    t, k = expert_ids.shape
    flat = expert_ids.flatten()
    res = compare_exact(counts, torch.bincount(flat, minlength=num_experts), "tokens_per_expert")
    if not res.ok:
        return res
    rows = row_index.flatten()
    if bool(((rows < 0) | (rows >= t * k)).any()):
        return CheckResult(False, f"row_index: {int(((rows < 0) | (rows >= t * k)).sum())} values outside [0, {t * k})")
    if not torch.equal(torch.sort(rows).values, torch.arange(t * k, device=rows.device)):
        return CheckResult(False, "row_index is not a permutation of 0 .. T*k-1 (some output rows written twice, some never)")
    ends = torch.cumsum(counts, 0)
    starts = ends - counts
    wrong = (rows < starts[flat]) | (rows >= ends[flat])
    if bool(wrong.any()):
        i = int(torch.nonzero(wrong)[0])
        return CheckResult(False, f"row_index: {int(wrong.sum())} slots outside their expert's segment (first: token {i // k} slot "
                                  f"{i % k}, expert {int(flat[i])}, row {int(rows[i])}, segment [{int(starts[flat[i]])}, {int(ends[flat[i]])}))")
    expected = x.new_empty((t * k, x.shape[1]))
    expected[rows] = x.repeat_interleave(k, dim=0)
    res = compare_exact(permuted, expected, "permuted")
    return CheckResult(res.ok, res.message, 0.0 if res.ok else None, 0.0 if res.ok else None)


def make_inputs(shape, dtype, gen):
    t, e, k, h = shape["tokens"], shape["experts"], shape["k"], shape["hidden"]
    x = randn(gen, (t, h), dtype, scale=1.0, offset=0.1, outliers=1e-3, outlier_scale=10.0)
    # Router scores with per-expert popularity (load imbalance); the experts listed in "idle"
    # never win a slot, so some segments are empty.
    popularity = randn(gen, (1, e), torch.float32, scale=1.0)
    popularity[:, list(shape.params.get("idle", ()))] = -1e4
    scores = randn(gen, (t, e), torch.float32, scale=1.0) + popularity
    # top-k ids ordered by score, not by id (as routers emit them).
    expert_ids = torch.topk(scores, k, dim=-1).indices
    return (x, expert_ids, e)


def flops(shape):
    return 0.0  # data movement only


def nbytes_moved(shape, dtype):
    t, e, k, h = shape["tokens"], shape["experts"], shape["k"], shape["hidden"]
    return float((t * h + t * k * h) * itemsize(dtype) + 2 * t * k * 8 + e * 8)


TASK = Task(
    name="moe_permute",
    category="fusion",
    description="MoE dispatch: copy x [T, H] into expert-contiguous order permuted [T*k, H] given int64 top-k expert ids [T, k]; returns (permuted, row_index [T, k], tokens_per_expert [E])",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        # Mixtral: 8 experts, top-2.
        Shape("small", {"tokens": 64, "experts": 8, "k": 2, "hidden": 256}, "small"),
        # DeepSeek-V2-Lite routing (64 experts, top-6), an odd token count and hidden size, three idle experts.
        Shape("awkward", {"tokens": 37, "experts": 64, "k": 6, "hidden": 129, "idle": (0, 17, 63)}, "awkward"),
        # Mixtral-8x7B (hidden 4096, top-2) over 16384 tokens: 256 MiB read, 512 MiB written in float32.
        Shape("large", {"tokens": 16384, "experts": 8, "k": 2, "hidden": 4096}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=Custom(fn=check, reference_precision=None, description=(
        "tokens_per_expert exact; row_index a permutation of 0..T*k-1 with each slot inside its expert's segment "
        "(experts in id order, order within a segment free); permuted[row_index[t,j]] == x[t] bit for bit")),
    flops=flops,
    bytes=nbytes_moved,
)
