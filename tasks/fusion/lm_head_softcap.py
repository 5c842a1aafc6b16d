import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import itemsize, randn

# float32 atol, derived as for tasks/matmul/matmul.py: a float32 accumulation over K terms carries
# an error that grows like u * sqrt(K) * rms (u = 2^-24) however good the kernel is, 0.8-1.04x the
# default bound (1e-5 x rms) at K = 8192 on the matmul task (cuBLAS, TF32 off); K = 2304 here, and
# the soft cap's slope is at most 1 (it shrinks errors on saturated logits). (Not re-measured on a
# GPU for this task; on CPU, torch float32 over 16 x 256000 outputs of the large shape reached
# max |err| = 0.3e-5 x rms, 0.05x the bound below.) 5e-5 x rms leaves room, while bfloat16
# operands overshoot it 330x on the same rows (the bf16_compute control is rejected). rtol stays 1e-4; bfloat16 keeps its
# default.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(x, weight, cap):
    return cap * torch.tanh(torch.nn.functional.linear(x, weight) / cap)


def make_inputs(shape, dtype, gen):
    m, k, v = shape["M"], shape["K"], shape["V"]
    # Final hidden states (after the last RMSNorm): per-token scales, a few large channels.
    row_scale = randn(gen, (m, 1), torch.float32, scale=0.5).abs() + 0.5
    x = (randn(gen, (m, k), torch.float32, offset=0.05, outliers=1e-3, outlier_scale=8.0) * row_scale).to(dtype)
    # Raw logits with rms ~15: many land in tanh's curved range around the cap of 30 and a tail
    # (outlier weights) saturates, so the cap changes most outputs visibly.
    weight = randn(gen, (v, k), dtype, scale=15.0 * k ** -0.5, offset=0.5 * k ** -0.5, outliers=1e-3, outlier_scale=6.0)
    return (x, weight, float(shape["cap"]))


def flops(shape):
    m, k, v = shape["M"], shape["K"], shape["V"]
    return 2.0 * m * v * k + 4.0 * m * v  # GEMM; divide, tanh, multiply


def nbytes_moved(shape, dtype):
    m, k, v = shape["M"], shape["K"], shape["V"]
    return float((m * k + v * k + m * v) * itemsize(dtype))


TASK = Task(
    name="lm_head_softcap",
    category="fusion",
    description="Gemma-2 output layer: logits = cap * tanh((x @ W^T) / cap), x [M, K], W [V, K], cap = 30 "
                "(final_logit_softcapping); float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 32, "K": 128, "V": 1000, "cap": 30.0}, "small"),
        # A decode step (M = 1) over an odd vocabulary and hidden size.
        Shape("awkward", {"M": 1, "K": 257, "V": 3001, "cap": 30.0}, "awkward"),
        # Gemma-2-2B: hidden 2304, vocabulary 256000, 1024 tokens.
        Shape("large", {"M": 1024, "K": 2304, "V": 256000, "cap": 30.0}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
