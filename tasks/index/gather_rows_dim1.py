import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import itemsize, nbytes, randint, randn


def reference(x, index):
    return torch.gather(x, 1, index)


def make_inputs(shape, dtype, gen):
    b, n, d, k = shape["B"], shape["N"], shape["D"], shape["K"]
    x = randn(gen, (b, n, d), dtype, scale=1.0, offset=0.1, outliers=1e-3)
    # Per-element int64 row indices into dim 1 (repeats are common when K is comparable to N);
    # the first and last rows are always hit.
    index = randint(gen, (b, k, d), 0, n)
    flat = index.view(-1)
    flat[0] = 0
    flat[flat.numel() - 1] = n - 1
    flat[flat.numel() // 2] = n - 1
    return (x, index)


def flops(shape):
    return 0.0


def nbytes_moved(shape, dtype):
    # index read once, each gathered element read once, the output written once.
    m = shape["B"] * shape["K"] * shape["D"]
    return float(nbytes((m,), torch.int64) + 2 * m * itemsize(dtype))


TASK = Task(
    name="gather_rows_dim1",
    category="index",
    description="torch.gather(x, 1, index): x [B, N, D], int64 index [B, K, D] -> [B, K, D] (dtype = x's dtype)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"B": 4, "N": 256, "D": 64, "K": 128}, "small"),
        # A single batch, K > N (every row hit several times), odd D.
        Shape("awkward", {"B": 1, "N": 97, "D": 33, "K": 301}, "awkward"),
        Shape("large", {"B": 16, "N": 4096, "D": 1024, "K": 4096}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # A gather copies values: bit-exact is the only right answer at any dtype.
    contract=Exact(),
    flops=flops,
    bytes=nbytes_moved,
)
