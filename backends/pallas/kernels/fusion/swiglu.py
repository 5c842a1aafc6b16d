"""SwiGLU gate y = silu(x @ W1^T) * (x @ W3^T), x [M, K], W1 and W3 [N, K] (nn.Linear layout).
Both GEMMs share the x tile: a 1-D grid of [BM, BN] output tiles in grouped order (GROUP_M row
tiles share a column tile while it sits in L2); each program walks K in BK steps, loads one x
tile and the matching [BN, BK] rows of both weights, and feeds two float32 accumulators through
pl.dot contracting the last dims (W is read along K with unit stride, never transposed in
memory). The epilogue applies silu(a) * b in float32 and writes y once: neither projection ever
reaches memory. float32 operands use precision=HIGHEST (IEEE products, no TF32); half operands
run on the tensor cores."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

GROUP_M = 8
_NT = (((1,), (1,)), ((), ()))  # contract the K dim of both operands: A [BM, BK] . W [BN, BK] -> [BM, BN]


def _tile(pid, n_m, n_n):
    """Grouped ordering: program pid -> (row tile, column tile)."""
    per_group = GROUP_M * n_n
    first_m = (pid // per_group) * GROUP_M
    group_m = jnp.minimum(n_m - first_m, GROUP_M)
    return first_m + (pid % per_group) % group_m, (pid % per_group) // group_m


def _kernel(x_ref, w1_ref, w3_ref, y_ref, *, M, N, K, BM, BN, BK, n_m, n_n):
    pid_m, pid_n = _tile(pl.program_id(0), n_m, n_n)
    rows = pid_m * BM + jnp.arange(BM, dtype=jnp.int32)
    cols = pid_n * BN + jnp.arange(BN, dtype=jnp.int32)
    ks = jnp.arange(BK, dtype=jnp.int32)
    row_ok, col_ok = rows < M, cols < N

    def body(j, accs):
        gate, up = accs
        start = pl.multiple_of(j * BK, BK)
        k_ok = (start + ks) < K
        a = plt.load(x_ref.at[:, pl.ds(start, BK)], mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        w_mask = col_ok[:, None] & k_ok[None, :]
        w1 = plt.load(w1_ref.at[:, pl.ds(start, BK)], mask=w_mask, other=0.0)
        w3 = plt.load(w3_ref.at[:, pl.ds(start, BK)], mask=w_mask, other=0.0)
        dot = functools.partial(jax.lax.dot_general, dimension_numbers=_NT, precision=jax.lax.Precision.HIGHEST,
                                preferred_element_type=jnp.float32)
        return gate + dot(a, w1), up + dot(a, w3)

    zeros = jnp.zeros((BM, BN), jnp.float32)
    gate, up = jax.lax.fori_loop(jnp.int32(0), jnp.int32(pl.cdiv(K, BK)), body, (zeros, zeros))
    y = gate / (1.0 + jnp.exp(-gate)) * up
    plt.store(y_ref, y.astype(y_ref.dtype), mask=row_ok[:, None] & col_ok[None, :])


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _swiglu(x, w_gate, w_up):
    M, K = x.shape
    N = w_gate.shape[0]
    # IEEE fp32 runs on the FMA units: two 64x64 accumulators, BK 32. Half precision on the tensor
    # cores: 128x64 (two accumulators are as many registers as one 128x128 tile), BK 64.
    # pl.dot needs every tile dimension >= 16.
    half = x.dtype != jnp.float32
    BK = 64 if half else 32
    BM = min(128 if half else 64, max(16, _pow2(M)))
    BN = min(64, max(16, _pow2(N)))
    Kp = pl.cdiv(K, BK) * BK
    n_m, n_n = pl.cdiv(M, BM), pl.cdiv(N, BN)
    w_spec = pl.BlockSpec((BN, Kp), lambda p: (_tile(p, n_m, n_n)[1], 0))
    return pl.pallas_call(
        functools.partial(_kernel, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, n_m=n_m, n_n=n_n),
        out_shape=jax.ShapeDtypeStruct((M, N), x.dtype),
        grid=(n_m * n_n,),
        in_specs=[pl.BlockSpec((BM, Kp), lambda p: (_tile(p, n_m, n_n)[0], 0)), w_spec, w_spec],
        out_specs=pl.BlockSpec((BM, BN), lambda p: _tile(p, n_m, n_n)),
        compiler_params=plt.CompilerParams(num_warps=8 if BM * BN >= 128 * 64 else 4, num_stages=3),
    )(x, w_gate, w_up)


def kernel_function(x, w_gate, w_up):
    return _swiglu(x, w_gate, w_up)
