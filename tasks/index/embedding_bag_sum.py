"""EmbeddingBag with mode="sum" (the DLRM / recommendation lookup): bag b is the sum of the
table rows weight[indices[j]] for j in [offsets[b], offsets[b + 1]).

Layout, written out:
  * weight [V, D] (task dtype), indices int64 [L] in [0, V), offsets int64 [B + 1] with
    offsets[0] = 0, offsets[B] = L, non-decreasing (F.embedding_bag's include_last_offset=True
    convention); bags may be empty (offsets[b] == offsets[b + 1]) and give a zero row
  * out [B, D] in the task dtype; sums accumulated in float32 for half types (the reference
    defines a bag with offsets[b + 1] < offsets[b] as empty too)
Tolerance: the default; bags hold at most a few dozen rows, so the order of the float32 sum moves
results by far less than 1e-5 x rms.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import itemsize, randint, randn


def reference(weight, indices, offsets):
    acc = torch.float64 if weight.dtype == torch.float64 else torch.float32  # opmath for half types
    starts, ends = offsets[:-1], offsets[1:]
    lengths = (ends - starts).clamp_min(0)
    nbags = starts.numel()
    bag = torch.repeat_interleave(torch.arange(nbags, device=weight.device), lengths)
    first = torch.cumsum(lengths, 0) - lengths  # position of each bag's first term in the flat list
    pos = torch.repeat_interleave(starts, lengths) + torch.arange(bag.numel(), device=weight.device) \
        - torch.repeat_interleave(first, lengths)
    out = torch.zeros((nbags, weight.shape[1]), dtype=acc, device=weight.device)
    out.index_add_(0, bag, weight[indices[pos]].to(acc))
    return out.to(weight.dtype)


def make_inputs(shape, dtype, gen):
    v, d, b, n = shape["V"], shape["D"], shape["B"], shape["L"]
    weight = randn(gen, (v, d), dtype, scale=1.0, offset=0.05, outliers=1e-3)
    # Zipf-like popularity: a few rows are looked up very often, as in real feature tables.
    u = torch.rand((n,), generator=gen, device=gen.device)
    indices = (v * u.pow(3.0)).to(torch.int64).clamp_(0, v - 1)
    indices[-1] = v - 1
    # Bag boundaries at random cut points (bag sizes vary widely); bag 0 is forced empty.
    cuts = torch.sort(randint(gen, (b - 1,), 0, n + 1)).values
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64, device=gen.device), cuts,
                         torch.full((1,), n, dtype=torch.int64, device=gen.device)])
    offsets[1] = 0
    return (weight, indices, offsets)


def flops(shape):
    return float(shape["L"] * shape["D"])


def nbytes_moved(shape, dtype):
    # indices and offsets read once, each looked-up row read once, the bags written once.
    d, b, n = shape["D"], shape["B"], shape["L"]
    return float(8 * n + 8 * (b + 1) + (n + b) * d * itemsize(dtype))


TASK = Task(
    name="embedding_bag_sum",
    category="index",
    description="F.embedding_bag(mode='sum') with int64 indices [L] and offsets [B+1] (include_last_offset): "
                "out[b] = sum of weight rows indices[offsets[b]:offsets[b+1]]; empty bags give zeros",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"V": 1000, "D": 128, "B": 64, "L": 1024}, "small"),
        # Odd width, few bags of very uneven size, one empty.
        Shape("awkward", {"V": 1023, "D": 97, "B": 7, "L": 301}, "awkward"),
        # DLRM-style: a 1M-row table of width 128, 32768 bags of 32 lookups on average: 562 MB fp32.
        Shape("large", {"V": 1048576, "D": 128, "B": 32768, "L": 1048576}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
