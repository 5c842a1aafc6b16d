"""BLAS ger, out of place: out = A + alpha x y^T, A [M, N], x [M], y [N]. A 2-D grid of [BR, BC]
tiles of A; the index maps hand each program the slices of x (by row block) and y (by column
block) its tile needs, so the outer product is formed in registers and A is streamed once in,
once out. Partial tiles at the right and bottom edges are masked. Arithmetic is float32, alpha
compiled in."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

TILE = 4096
MAX_BC = 1024


def _kernel(a_ref, x_ref, y_ref, out_ref, *, M, N, BR, BC, alpha):
    rows = pl.program_id(0) * BR + jnp.arange(BR, dtype=jnp.int32)
    cols = pl.program_id(1) * BC + jnp.arange(BC, dtype=jnp.int32)
    row_ok, col_ok = rows < M, cols < N
    mask = row_ok[:, None] & col_ok[None, :]
    a = plt.load(a_ref, mask=mask, other=0.0).astype(jnp.float32)
    x = plt.load(x_ref, mask=row_ok, other=0.0).astype(jnp.float32)
    y = plt.load(y_ref, mask=col_ok, other=0.0).astype(jnp.float32)
    plt.store(out_ref, (a + (alpha * x)[:, None] * y[None, :]).astype(out_ref.dtype), mask=mask)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@functools.partial(jax.jit, static_argnames=("alpha",))
def _ger(a, x, y, alpha):
    M, N = a.shape
    BC = min(_pow2(N), MAX_BC)
    BR = max(1, min(TILE // BC, _pow2(M)))
    return pl.pallas_call(
        functools.partial(_kernel, M=M, N=N, BR=BR, BC=BC, alpha=alpha),
        out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype),
        grid=(pl.cdiv(M, BR), pl.cdiv(N, BC)),
        in_specs=[pl.BlockSpec((BR, BC), lambda i, j: (i, j)),
                  pl.BlockSpec((BR,), lambda i, j: (i,)),
                  pl.BlockSpec((BC,), lambda i, j: (j,))],
        out_specs=pl.BlockSpec((BR, BC), lambda i, j: (i, j)),
        compiler_params=plt.CompilerParams(num_warps=8, num_stages=1),
    )(a, x, y)


def kernel_function(a, x, y, alpha):
    return _ger(a, x, y, float(alpha))
