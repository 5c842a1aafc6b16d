import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import itemsize, nbytes, randn


def reference(x, index):
    # index [B, K] -> [B, K, 1], broadcast along D: whole rows of each batch are taken.
    return torch.take_along_dim(x, index.unsqueeze(-1), dim=1)


def make_inputs(shape, dtype, gen):
    b, n, d, k = shape["B"], shape["N"], shape["D"], shape["K"]
    x = randn(gen, (b, n, d), dtype, scale=1.0, offset=0.1, outliers=1e-3)
    # Token pruning / top-k selection: per batch, the K highest-scoring of N tokens in score
    # order (distinct indices, a different permutation per batch).
    scores = torch.rand((b, n), generator=gen, device=gen.device)
    index = torch.topk(scores, k, dim=1).indices
    return (x, index)


def flops(shape):
    return 0.0


def nbytes_moved(shape, dtype):
    b, d, k = shape["B"], shape["D"], shape["K"]
    return float(nbytes((b, k), torch.int64) + 2 * b * k * d * itemsize(dtype))


TASK = Task(
    name="take_along_dim",
    category="index",
    description="torch.take_along_dim(x, index[..., None], dim=1) with x [B, N, D] and int64 index [B, K] broadcast over D: "
                "per-batch top-k row selection -> [B, K, D]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"B": 4, "N": 256, "D": 64, "K": 128}, "small"),
        # Odd D, odd N, only K = 3 of 97 rows kept per batch.
        Shape("awkward", {"B": 3, "N": 97, "D": 33, "K": 3}, "awkward"),
        # Keeping the top half of 4096 tokens (width 1024) in 32 sequences: 537 MB of fp32 traffic.
        Shape("large", {"B": 32, "N": 4096, "D": 1024, "K": 2048}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # A gather copies values: bit-exact is the only right answer at any dtype.
    contract=Exact(),
    flops=flops,
    bytes=nbytes_moved,
)
