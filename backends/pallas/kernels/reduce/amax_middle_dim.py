"""torch.amax(x, dim=1) of [B, M, N] -> [B, N]: a maximum down the strided middle dim, keeping the
contiguous one. A grid of (batch, column tile of BN): each program walks M in [BM, BN] tiles (each
tile row is BN contiguous elements, so loads stay coalesced), keeping a running maximum of the
tile's shape and a flag for NaN, and reduces over the BM rows once at the end. The GPU's max
drops a NaN operand, so NaN is tracked apart and wins, as in torch; -inf pads masked lanes.
Exact: the result is one of the inputs."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

TILE = 4096
MAX_BN = 256


def _kernel(x_ref, y_ref, *, M, N, BM, BN):
    cols = pl.program_id(1) * BN + jnp.arange(BN, dtype=jnp.int32)
    col_ok = cols < N
    rows = jnp.arange(BM, dtype=jnp.int32)

    def body(j, state):
        best, nan = state
        start = pl.multiple_of(j * BM, BM)
        mask = ((start + rows) < M)[:, None] & col_ok[None, :]
        x = plt.load(x_ref.at[pl.ds(start, BM), pl.ds(jnp.int32(0), BN)], mask=mask, other=-jnp.inf).astype(jnp.float32)
        return jnp.maximum(best, x), jnp.maximum(nan, (x != x).astype(jnp.float32))

    init = (jnp.full((BM, BN), -jnp.inf, jnp.float32), jnp.zeros((BM, BN), jnp.float32))
    best, nan = jax.lax.fori_loop(jnp.int32(0), jnp.int32(pl.cdiv(M, BM)), body, init)
    out = jnp.where(jnp.max(nan, axis=0) > 0.0, jnp.nan, jnp.max(best, axis=0))
    plt.store(y_ref, out.astype(y_ref.dtype), mask=col_ok)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _amax_middle_dim(x):
    B, M, N = x.shape
    BN = min(_pow2(N), MAX_BN)
    BM = max(1, min(TILE // BN, _pow2(M)))
    return pl.pallas_call(
        functools.partial(_kernel, M=M, N=N, BM=BM, BN=BN),
        out_shape=jax.ShapeDtypeStruct((B, N), x.dtype),
        grid=(B, pl.cdiv(N, BN)),
        in_specs=[pl.BlockSpec((None, pl.cdiv(M, BM) * BM, BN), lambda b, j: (b, 0, j))],
        out_specs=pl.BlockSpec((None, BN), lambda b, j: (b, j)),
        compiler_params=plt.CompilerParams(num_warps=8, num_stages=3),
    )(x)


def kernel_function(x):
    return _amax_middle_dim(x)
