"""C = A @ B^T with A [M, K] and B [N, K] (the nn.Linear layout; B is never transposed in
memory). A 1-D grid of [BM, BN] output tiles in grouped order (GROUP_M row tiles share a column
tile while it is in L2); each program walks K in BK steps, loading an [BM, BK] tile of A and an
[BN, BK] tile of B, both along K with unit stride, and accumulates pl.dot products contracting
the last dims of both (the transpose is the dot's operand layout, not a copy) in float32.
float32 inputs use precision=HIGHEST (IEEE products, no TF32); half inputs run on the tensor
cores."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

GROUP_M = 8
_NT = (((1,), (1,)), ((), ()))  # contract the K dim of both operands: A [BM, BK] . B [BN, BK] -> [BM, BN]


def _tile(pid, n_m, n_n):
    """Grouped ordering: program pid -> (row tile, column tile)."""
    per_group = GROUP_M * n_n
    first_m = (pid // per_group) * GROUP_M
    group_m = jnp.minimum(n_m - first_m, GROUP_M)
    return first_m + (pid % per_group) % group_m, (pid % per_group) // group_m


def _kernel(a_ref, b_ref, c_ref, *, M, N, K, BM, BN, BK, n_m, n_n):
    pid_m, pid_n = _tile(pl.program_id(0), n_m, n_n)
    rows = pid_m * BM + jnp.arange(BM, dtype=jnp.int32)
    cols = pid_n * BN + jnp.arange(BN, dtype=jnp.int32)
    ks = jnp.arange(BK, dtype=jnp.int32)
    row_ok, col_ok = rows < M, cols < N

    def body(j, acc):
        start = pl.multiple_of(j * BK, BK)
        k_ok = (start + ks) < K
        a = plt.load(a_ref.at[:, pl.ds(start, BK)], mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b = plt.load(b_ref.at[:, pl.ds(start, BK)], mask=col_ok[:, None] & k_ok[None, :], other=0.0)
        return acc + jax.lax.dot_general(a, b, _NT, precision=jax.lax.Precision.HIGHEST,
                                         preferred_element_type=jnp.float32)

    acc = jax.lax.fori_loop(jnp.int32(0), jnp.int32(pl.cdiv(K, BK)), body, jnp.zeros((BM, BN), jnp.float32))
    plt.store(c_ref, acc.astype(c_ref.dtype), mask=row_ok[:, None] & col_ok[None, :])


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _matmul_nt(x, w):
    M, K = x.shape
    N = w.shape[0]
    # IEEE fp32 runs on the FMA units (BK 32); half precision on the tensor cores (BK 64).
    # pl.dot needs every tile dimension >= 16.
    BK = 32 if x.dtype == jnp.float32 else 64
    BM = min(128, max(16, _pow2(M)))
    BN = min(128, max(16, _pow2(N)))
    Kp = pl.cdiv(K, BK) * BK
    n_m, n_n = pl.cdiv(M, BM), pl.cdiv(N, BN)
    return pl.pallas_call(
        functools.partial(_kernel, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, n_m=n_m, n_n=n_n),
        out_shape=jax.ShapeDtypeStruct((M, N), x.dtype),
        grid=(n_m * n_n,),
        in_specs=[pl.BlockSpec((BM, Kp), lambda p: (_tile(p, n_m, n_n)[0], 0)),
                  pl.BlockSpec((BN, Kp), lambda p: (_tile(p, n_m, n_n)[1], 0))],
        out_specs=pl.BlockSpec((BM, BN), lambda p: _tile(p, n_m, n_n)),
        compiler_params=plt.CompilerParams(num_warps=8 if BM * BN >= 128 * 64 else 4, num_stages=3),
    )(x, w)


def kernel_function(x, w):
    return _matmul_nt(x, w)
