"""Packing signed int4 values two to a byte, the storage format of int4 weight-only kernels.

Contract, written out:
  * input: v int8 [N, K], every value in [-8, 7], K even; the task dtype (int8) is the dtype
    of v (there is no float arithmetic in this task)
  * nibbles: two's complement, nib(x) = x & 0xF (so -8 -> 0x8, -1 -> 0xF, 7 -> 0x7)
  * order: out[n, i] = nib(v[n, 2i]) | (nib(v[n, 2i+1]) << 4): element 2i in the low nibble,
    element 2i+1 in the high nibble
  * output: uint8 [N, K/2]
  * comparison: exact (no rounding anywhere)
A float kernel fails: the output must be uint8 and exact.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import randint


def reference(v):
    n, k = v.shape
    if k % 2:
        raise ValueError(f"int4_pack: last dim {k} is not even")
    nib = v.to(torch.int16) & 0xF
    return (nib[:, 0::2] | (nib[:, 1::2] << 4)).to(torch.uint8)


def make_inputs(shape, dtype, gen):
    # Uniform over all 16 nibble values (both signs, both extremes -8 and 7).
    return (randint(gen, (shape["N"], shape["K"]), -8, 8, torch.int8),)


def flops(shape):
    return 1.5 * shape["N"] * shape["K"]


def bytes_moved(shape, dtype):
    # The dtype does not change what moves: int8 in, half as many uint8 bytes out.
    n, k = shape["N"], shape["K"]
    return float(n * k + n * (k // 2))


TASK = Task(
    name="int4_pack",
    category="quantization",
    description="pack signed int4 values (int8 [N, K] in [-8, 7]) two per byte into uint8 [N, K/2], element 2i in the low nibble",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"N": 64, "K": 1024}, "small"),
        Shape("awkward", {"N": 7, "K": 4098}, "awkward"),
        Shape("large", {"N": 16384, "K": 32768}, "large"),
    ],
    dtypes=("int8",),
    contract=Exact(description=(
        "exact: out[n,i] = (v[n,2i] & 0xF) | ((v[n,2i+1] & 0xF) << 4) as uint8 [N, K/2], "
        "two's complement nibbles, element 2i in the low nibble")),
    flops=flops,
    bytes=bytes_moved,
)
