"""Per-channel (per-row) int8 dequantization x[n, k] = q[n, k] * scale[n], to the dtype named by
out_dtype. A 2-D grid of [BR, BC] tiles; each program's slice of the float32 scales is picked by
its row block. The product is formed in float32 (q is exact in float32, so this is one rounding)
and rounded once to the output dtype; q = 0 gives exactly 0. Partial tiles are masked."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

TILE = 4096
MAX_BC = 1024


def _kernel(q_ref, s_ref, x_ref, *, N, K, BR, BC):
    rows = pl.program_id(0) * BR + jnp.arange(BR, dtype=jnp.int32)
    cols = pl.program_id(1) * BC + jnp.arange(BC, dtype=jnp.int32)
    row_ok = rows < N
    mask = row_ok[:, None] & (cols < K)[None, :]
    q = plt.load(q_ref, mask=mask, other=0).astype(jnp.float32)
    s = plt.load(s_ref, mask=row_ok, other=0.0)
    plt.store(x_ref, (q * s[:, None]).astype(x_ref.dtype), mask=mask)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@functools.partial(jax.jit, static_argnames=("out_dtype",))
def _dequantize(q, scale, out_dtype):
    N, K = q.shape
    BC = min(_pow2(K), MAX_BC)
    BR = max(1, min(TILE // BC, _pow2(N)))
    tile = pl.BlockSpec((BR, BC), lambda i, j: (i, j))
    return pl.pallas_call(
        functools.partial(_kernel, N=N, K=K, BR=BR, BC=BC),
        out_shape=jax.ShapeDtypeStruct((N, K), jnp.dtype(out_dtype)),
        grid=(pl.cdiv(N, BR), pl.cdiv(K, BC)),
        in_specs=[tile, pl.BlockSpec((BR,), lambda i, j: (i,))],
        out_specs=tile,
        compiler_params=plt.CompilerParams(num_warps=8, num_stages=1),
    )(q, scale)


def kernel_function(q, scale, out_dtype):
    return _dequantize(q, scale, str(out_dtype))
