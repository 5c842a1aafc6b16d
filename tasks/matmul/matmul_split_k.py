"""C = A @ B with a very long reduction (K >> M, N): too few output tiles to fill a GPU, so fast
kernels split K across programs and reduce the partial products (split-K / stream-K).

Tolerance (float32), derived: a float32 sum of K terms accumulated one after another carries a
rounding error of about u * sqrt(K / 2) * rms(C) (u = 2^-24; each of the K additions rounds a
partial sum that grows like sqrt(k)), and the worst output is several times that. Simulated on
CPU for this task's operand distribution at the large shape's K = 262144 (256 outputs, float32
products, numpy float32 cumsum): one sequential chain per output reaches max 4.9e-5 x rms (mean
5.8e-6), 32-wide tiles summed sequentially 6e-6; over the 65,536 outputs of the large shape the
sequential worst case grows to roughly 7e-5. atol = 1.5e-4 x rms covers it with 2x room, while
TF32-rounded operands (same simulation: max 5.4e-4, mean 1.5e-4 x rms) and bfloat16 operands
(the bf16_compute control, ~2e-3 x rms) still fail. rtol stays 1e-4. float16/bfloat16 (operands
and output) keep their defaults: one rounding of the output dominates there. Outputs grow like
sqrt(K) plus the drift (a few hundred here), well inside float16's range.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import gemm_flops, gemm_nbytes, gemm_operands

TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=1.5e-4))


def reference(a, b):
    return torch.matmul(a, b)


def make_inputs(shape, dtype, gen):
    m, k, n = shape["M"], shape["K"], shape["N"]
    # Near-zero-mean operands with outliers; the small mean product (-1e-3) adds a drift of
    # ~K * 1e-3, comparable to the random part sqrt(K) * 0.5, so partial sums of split-K pieces
    # do not cancel to nothing and a lost or doubled piece is visible everywhere.
    return gemm_operands(gen, (m, k), (k, n), dtype)


def flops(shape):
    return gemm_flops(shape["M"], shape["N"], shape["K"])


def nbytes_moved(shape, dtype):
    # Partial products of split-K kernels are scratch traffic of the method, not of the problem.
    return gemm_nbytes(shape["M"], shape["K"], shape["N"], dtype)


TASK = Task(
    name="matmul_split_k",
    category="matmul",
    description="C = A @ B with K >> M, N (A [M, K], B [K, N]): a long reduction that needs split-K to fill the GPU; "
                "float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 32, "K": 16384, "N": 48}, "small"),
        # Odd M and N below any tile, K prime (no split divides it evenly).
        Shape("awkward", {"M": 7, "K": 30011, "N": 5}, "awkward"),
        # 256 x 256 outputs (one 128x128 tile grid of 4 programs without split-K), K = 2^18:
        # 537 MB of fp32 operands.
        Shape("large", {"M": 256, "K": 262144, "N": 256}, "large"),
    ],
    dtypes=("float32", "float16", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
