"""Batched matrix product C[b] = A[b] @ B[b], A [B, M, K], B [B, K, N]. A grid of (output tile,
batch): within a batch the [BM, BN] output tiles run in grouped order (GROUP_M row tiles share a
column tile of B while it is in L2), and the batch index map selects each program's own
operands, so no batch reuses another's data. Each program walks K in BK steps, masking the
ragged edges (M = 1 and odd K, N included), and accumulates pl.dot products in float32. float32
inputs use precision=HIGHEST (IEEE products, no TF32); half inputs run on the tensor cores."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

GROUP_M = 8


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
        b = plt.load(b_ref.at[pl.ds(start, BK), :], mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        return acc + jnp.dot(a, b, precision=jax.lax.Precision.HIGHEST, preferred_element_type=jnp.float32)

    acc = jax.lax.fori_loop(jnp.int32(0), jnp.int32(pl.cdiv(K, BK)), body, jnp.zeros((BM, BN), jnp.float32))
    plt.store(c_ref, acc.astype(c_ref.dtype), mask=row_ok[:, None] & col_ok[None, :])


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _bmm(a, b):
    B, M, K = a.shape
    N = b.shape[2]
    # IEEE fp32 runs on the FMA units (BK 32); half precision on the tensor cores (BK 64).
    # pl.dot needs every tile dimension >= 16.
    BK = 32 if a.dtype == jnp.float32 else 64
    BM = min(128, max(16, _pow2(M)))
    BN = min(128, max(16, _pow2(N)))
    Kp = pl.cdiv(K, BK) * BK
    n_m, n_n = pl.cdiv(M, BM), pl.cdiv(N, BN)
    return pl.pallas_call(
        functools.partial(_kernel, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, n_m=n_m, n_n=n_n),
        out_shape=jax.ShapeDtypeStruct((B, M, N), a.dtype),
        grid=(n_m * n_n, B),
        in_specs=[pl.BlockSpec((None, BM, Kp), lambda p, s: (s, _tile(p, n_m, n_n)[0], 0)),
                  pl.BlockSpec((None, Kp, BN), lambda p, s: (s, 0, _tile(p, n_m, n_n)[1]))],
        out_specs=pl.BlockSpec((None, BM, BN), lambda p, s: (s, *_tile(p, n_m, n_n))),
        compiler_params=plt.CompilerParams(num_warps=8 if BM * BN >= 128 * 64 else 4, num_stages=3),
    )(a, b)


def kernel_function(a, b):
    return _bmm(a, b)
