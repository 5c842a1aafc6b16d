import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import itemsize, nbytes, randint, randn


def reference(x, index):
    return torch.index_select(x, 0, index)


def make_inputs(shape, dtype, gen):
    n, d, m = shape["N"], shape["D"], shape["M"]
    x = randn(gen, (n, d), dtype, scale=1.0, offset=0.1, outliers=1e-3)
    # The MoE dispatch pattern: each token row is selected top_k = M / N times on average, in an
    # order that groups rows by expert (random here); the first and last rows are always hit,
    # and some rows are selected several times, others never.
    index = randint(gen, (m,), 0, n)
    index[0] = n - 1
    index[m // 2] = 0
    index[m - 1] = n - 1
    return (x, index)


def flops(shape):
    return 0.0


def nbytes_moved(shape, dtype):
    # index read once, each selected row read once, the output written once.
    m, d = shape["M"], shape["D"]
    return float(nbytes((m,), torch.int64) + 2 * m * d * itemsize(dtype))


TASK = Task(
    name="index_select_rows",
    category="index",
    description="torch.index_select(x, 0, index): rows of x [N, D] picked by int64 index [M] (repeats allowed) -> [M, D]",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 256, "D": 128, "M": 512}, "small"),
        # Odd D (a masked tail) and few selections (61) out of many rows (1001).
        Shape("awkward", {"N": 1001, "D": 97, "M": 61}, "awkward"),
        # MoE dispatch: 32768 tokens of width 4096 (Llama-3-8B hidden) gathered top-2 = 65536 rows: 2.1 GB fp32.
        Shape("large", {"N": 32768, "D": 4096, "M": 65536}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    # A gather copies values: bit-exact is the only right answer at any dtype.
    contract=Exact(),
    flops=flops,
    bytes=nbytes_moved,
)
