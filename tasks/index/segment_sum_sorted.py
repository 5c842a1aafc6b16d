"""Sorted segment sum (torch_scatter.segment_coo / tf.math.segment_sum): rows of data with the
same segment id are summed; ids are sorted (non-decreasing), so each segment is one contiguous run.

  * data [L, D] (task dtype), segment_ids int64 [L] in [0, S), sorted; num_segments S (an int)
  * out [S, D]: out[s] = sum of data[i] with segment_ids[i] == s; segments with no rows give zeros
  * sums accumulated in float32 for half types; the reference does not rely on the sorting
    (index_add), so its definition holds for any ids
The ids are drawn as in a GNN aggregation over edges sorted by destination node: most nodes have a
handful of incoming edges, some none, and one hub node receives 2% of all edges.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose
from mkbench.taskkit import nbytes, randint, randn


def reference(data, segment_ids, num_segments):
    acc = torch.float64 if data.dtype == torch.float64 else torch.float32  # opmath for half types
    out = torch.zeros((num_segments, data.shape[1]), dtype=acc, device=data.device)
    out.index_add_(0, segment_ids, data.to(acc))
    return out.to(data.dtype)


def make_inputs(shape, dtype, gen):
    n, d, s = shape["L"], shape["D"], shape["S"]
    ids = randint(gen, (n,), 0, s)
    ids[: max(1, n // 50)] = s // 3  # the hub
    ids[-1] = s - 1
    ids = torch.sort(ids).values
    data = randn(gen, (n, d), dtype, scale=1.0, offset=0.05, outliers=1e-3)
    return (data, ids, s)


def flops(shape):
    return float(shape["L"] * shape["D"])


def nbytes_moved(shape, dtype):
    n, d, s = shape["L"], shape["D"], shape["S"]
    return float(nbytes((n, d), dtype) + nbytes((n,), torch.int64) + nbytes((s, d), dtype))


TASK = Task(
    name="segment_sum_sorted",
    category="index",
    description="sorted segment sum: data [L, D] with non-decreasing int64 segment_ids [L] -> [S, D], "
                "out[s] = sum of rows with id s (empty segments give zeros)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"L": 2048, "D": 64, "S": 256}, "small"),
        # Odd width; more segments than rows, so most segments are empty.
        Shape("awkward", {"L": 301, "D": 33, "S": 997}, "awkward"),
        # Message aggregation over 2M edges into 262144 nodes with 64 features: 621 MB fp32.
        Shape("large", {"L": 2097152, "D": 64, "S": 262144}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(),
    flops=flops,
    bytes=nbytes_moved,
)
