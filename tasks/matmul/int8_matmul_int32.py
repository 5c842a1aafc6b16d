"""int8 x int8 -> int32 matrix product with exact integer accumulation (torch._int_mm semantics).

Contract, written out:
  * inputs: A int8 [M, K], B int8 [K, N], every value in [-128, 127] (both extremes occur)
  * output: C int32 [M, N], C[m, n] = sum_k int32(A[m, k]) * int32(B[k, n]), exact; no overflow
    is possible here (|C| <= 16384 K < 2^31 for K < 131072; every shape has K <= 8192)
  * comparison: exact, every element
A float kernel fails: rows 0 and M // 2 of A hold values in [125, 127], and columns 0 and N - 1
of B magnitudes in [125, 127], positive over the first 3/4 of K and negative over the rest. The
four outputs where they meet have partial sums along K that climb to about 3K/4 * 126^2 >= 17.6M
> 2^24 (K >= 1501 everywhere) before falling back: float32 accumulation (bf16/fp16 tensor cores
included) rounds those partial sums to even steps and loses the low bits.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import Exact
from mkbench.taskkit import randint


def reference(a, b):
    # float64 holds every product and partial sum exactly (|C| < 2^31 << 2^53), on any device.
    return torch.matmul(a.to(torch.float64), b.to(torch.float64)).to(torch.int32)


def make_inputs(shape, dtype, gen):
    m, k, n = shape["M"], shape["K"], shape["N"]
    a = randint(gen, (m, k), -128, 128, torch.int8)
    b = randint(gen, (k, n), -128, 128, torch.int8)
    for r in {0, m // 2}:
        a[r] = randint(gen, (k,), 125, 128, torch.int8)
    sign = torch.where(torch.arange(k, device=gen.device) < (k * 3) // 4, 1, -1).to(torch.int8)
    for c in {0, n - 1}:
        b[:, c] = randint(gen, (k,), 125, 128, torch.int8) * sign
    return (a, b)


def flops(shape):
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def bytes_moved(shape, dtype):
    # int8 operands, int32 output, whatever the dtype argument says.
    m, k, n = shape["M"], shape["K"], shape["N"]
    return float(m * k + k * n + 4 * m * n)


TASK = Task(
    name="int8_matmul_int32",
    category="matmul",
    description="int8 x int8 -> int32 matmul, A [M, K] @ B [K, N], exact int32 accumulation (torch._int_mm semantics)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 64, "K": 2048, "N": 96}, "small"),
        # Three rows, K and N odd and not multiples of any tile (int8 MMA wants K % 32 == 0).
        Shape("awkward", {"M": 3, "K": 1501, "N": 77}, "awkward"),
        Shape("large", {"M": 16384, "K": 8192, "N": 8192}, "large"),
    ],
    dtypes=("int8",),
    contract=Exact(description=(
        "exact int32: C[m,n] = sum_k int32(A[m,k]) * int32(B[k,n]) for int8 A [M,K], B [K,N] (no overflow at these K); "
        "saturated rows/columns push sums past 2^24 so float accumulation fails")),
    flops=flops,
    bytes=bytes_moved,
)
