"""float16 operands, float32 accumulation, float16 output: the contract forces the accumulator.

Contract, written out:
  * inputs: A float16 [M, K], B float16 [K, N]; output C float16 [M, N]
  * C = fp16(y) where y approximates the exact e = sum_k A[m, k] B[k, n] with float32 accumulation
    (fp16 x fp16 products are exact in float32; the tensor-core convention)
  * comparison, per element against e (float64, exact for these inputs up to ~1e-16):
      |C - e| <= 2^-11 |e| + 5e-5 rms(e)
    2^-11 is one round-to-nearest of y to float16 (half an ulp, relative); 5e-5 rms(e) is the
    float32 accumulation error of tasks/matmul/matmul.py (measured max 2.8-3.1e-5 x rms at
    K = 8192 on an H100; K <= 4096 here), which rounding to float16 scales by at most 1 + 2^-11.
This is ~20x tighter than the default float16 tolerance (1e-2): a kernel that accumulates in
float16 (error ~u16 sqrt(K) ~ 3e-2 x rms at K = 4096, ~4e-3 at K = 96) fails, as does a bfloat16
or TF32 path.
"""

import torch

from mkbench import Shape, Task
from mkbench.contracts import AllClose, Tol
from mkbench.taskkit import gemm_flops, gemm_nbytes, gemm_operands

TOLERANCES = {"float16": Tol(rtol=2.0 ** -11, atol=5e-5)}


def reference(a, b):
    acc = torch.float64 if a.dtype == torch.float64 else torch.float32
    return torch.matmul(a.to(acc), b.to(acc)).to(a.dtype)


def make_inputs(shape, dtype, gen):
    m, k, n = shape["M"], shape["K"], shape["N"]
    return gemm_operands(gen, (m, k), (k, n), dtype)


def flops(shape):
    return gemm_flops(shape["M"], shape["N"], shape["K"])


def nbytes_moved(shape, dtype):
    return gemm_nbytes(shape["M"], shape["K"], shape["N"], dtype)


TASK = Task(
    name="matmul_fp16_acc32",
    category="matmul",
    description="C = A @ B in float16 with float32 accumulation (A [M, K], B [K, N], C float16); judged tightly enough "
                "that float16 accumulation fails",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 128, "K": 96, "N": 160}, "small"),
        Shape("awkward", {"M": 1, "K": 1023, "N": 300}, "awkward"),
        Shape("large", {"M": 8192, "K": 4096, "N": 8192}, "large"),
    ],
    dtypes=("float16",),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
