import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import itemsize, nbytes, randint, randn


def reference(indices, weight):
    return torch.nn.functional.embedding(indices, weight)


def make_inputs(shape, dtype, gen):
    b, s, v, d = shape["B"], shape["S"], shape["V"], shape["D"]
    indices = randint(gen, (b, s), 0, v)
    flat = indices.view(-1)
    n = flat.numel()
    # Some rows are hit more than once (every 7th token repeats its left neighbour's row), and
    # the first and last rows are always hit.
    odd = flat[1::7]
    odd.copy_(flat[0::7][: odd.numel()])
    flat[0] = 0
    flat[n - 1] = v - 1
    flat[n // 2] = v - 1
    flat[n // 3] = 0
    weight = randn(gen, (v, d), dtype, scale=1.0, offset=0.1, outliers=1e-3)
    return (indices, weight)


def flops(shape):
    return 0.0


def nbytes_moved(shape, dtype):
    # indices read once, each gathered row read once, the output written once; rows of the
    # table that are never indexed are not traffic.
    tokens = shape["B"] * shape["S"]
    return nbytes((tokens,), torch.int64) + 2 * tokens * shape["D"] * itemsize(dtype)


TASK = Task(
    name="embedding",
    category="index",
    description="embedding lookup: weight[indices] for int64 indices [B, S] into a [V, D] table (dtype = table dtype)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"B": 4, "S": 64, "V": 1000, "D": 128}, "small"),
        Shape("awkward", {"B": 1, "S": 77, "V": 1023, "D": 97}, "awkward"),
        Shape("large", {"B": 16, "S": 4096, "V": 50257, "D": 1024}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # A gather copies values: bit-exact is the only right answer at any dtype.
    contract=Exact(),
    flops=flops,
    bytes=nbytes_moved,
)
