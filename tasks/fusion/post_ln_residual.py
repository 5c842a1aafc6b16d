import torch

from mkbench import Shape, Task
from mkbench.contracts import DEFAULT_TOLERANCES, AllClose, Tol
from mkbench.taskkit import itemsize, randn

EPS = 1e-12  # BERT's layer_norm_eps

# float32 atol, derived as for tasks/matmul/matmul.py: the float32 GEMM over K terms carries an
# accumulation error of order u * sqrt(K) * rms (u = 2^-24) however good the kernel is, 0.8-1.04x
# the default bound (1e-5 x rms) at K = 8192 on the matmul task (cuBLAS, TF32 off); K = 4096 here.
# The LayerNorm divides by the row's standard deviation, which is about that of the GEMM output
# (the residual is of the same size), so the relative error carries through, plus a few ulps for
# mean, variance and rsqrt. (Not re-measured on a GPU for this task; on CPU, torch float32 over
# 64 rows of the large shape reached max |err| = 0.17e-5 x rms, 0.02x the bound below.) 5e-5 x rms
# leaves room, while bfloat16 operands overshoot it 225x on the same rows (the bf16_compute control
# is rejected). rtol stays 1e-4; bfloat16 keeps its default.
TOLERANCES = dict(DEFAULT_TOLERANCES, float32=Tol(rtol=1e-4, atol=5e-5))


def reference(h, weight, bias, residual, ln_weight, ln_bias):
    f = torch.nn.functional
    z = residual + f.linear(h, weight, bias)
    return f.layer_norm(z, (z.shape[-1],), ln_weight, ln_bias, EPS)


def make_inputs(shape, dtype, gen):
    m, k, n = shape["M"], shape["K"], shape["N"]
    h = randn(gen, (m, k), dtype, scale=1.0, offset=0.1, outliers=1e-3, outlier_scale=8.0)
    weight = randn(gen, (n, k), dtype, scale=k ** -0.5, offset=0.01 * k ** -0.5, outliers=1e-3, outlier_scale=8.0)
    bias = randn(gen, (n,), dtype, scale=0.5, offset=0.2)
    # The residual stream (a post-LN model's previous LayerNorm output): O(1) with per-row
    # offsets, so the row mean that LayerNorm removes is not zero.
    row_offset = randn(gen, (m, 1), torch.float32, scale=1.0)
    residual = (randn(gen, (m, n), torch.float32, scale=1.0, outliers=1e-3, outlier_scale=10.0) + row_offset).to(dtype)
    ln_weight = randn(gen, (n,), dtype, scale=0.2, offset=1.0)
    ln_bias = randn(gen, (n,), dtype, scale=0.1)
    return (h, weight, bias, residual, ln_weight, ln_bias)


def flops(shape):
    m, k, n = shape["M"], shape["K"], shape["N"]
    return 2.0 * m * n * k + 10.0 * m * n  # GEMM; bias, residual, LayerNorm over N


def nbytes_moved(shape, dtype):
    m, k, n = shape["M"], shape["K"], shape["N"]
    return float((m * k + n * k + n + m * n + 2 * n + m * n) * itemsize(dtype))


TASK = Task(
    name="post_ln_residual",
    category="fusion",
    description="post-LN sublayer output (BERT's BertOutput): y = LayerNorm(residual + h @ W^T + b; gamma, beta, "
                "eps=1e-12), h [M, K], W [N, K], residual [M, N]; the GEMM epilogue normalises whole rows of N; "
                "float32 means IEEE float32 (no TF32)",
    reference=reference,
    make_inputs=make_inputs,
    shapes=[
        Shape("small", {"M": 128, "K": 256, "N": 64}, "small"),
        # An odd token count and K, N that are not multiples of any tile size.
        Shape("awkward", {"M": 7, "K": 300, "N": 75}, "awkward"),
        # BERT-large FFN output: 4096 -> 1024, then residual and LayerNorm, over 64 x 512 tokens.
        Shape("large", {"M": 32768, "K": 4096, "N": 1024}, "large"),
    ],
    dtypes=("float32", "bfloat16"),
    contract=AllClose(tolerances=TOLERANCES),
    flops=flops,
    bytes=nbytes_moved,
)
