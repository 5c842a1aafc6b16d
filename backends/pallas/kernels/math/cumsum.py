"""Inclusive prefix sum along the last dim of [R, C]. Each program scans BR rows block by block:
a float32 scan inside the [BR, BC] tile plus the running total of the tiles before it, carried
per row. The carry is the scan's last column (masked tail elements load as 0, so it is the row's
total so far), picked out with a masked sum because the Triton lowering cannot slice a value."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

TILE = 4096
MAX_BC = 2048


def _kernel(x_ref, y_ref, *, R, C, BR, BC):
    rows = pl.program_id(0) * BR + jnp.arange(BR, dtype=jnp.int32)
    row_ok = rows < R
    cols = jnp.arange(BC, dtype=jnp.int32)
    last = (cols == BC - 1)[None, :]

    def body(j, carry):
        start = pl.multiple_of(j * BC, BC)
        mask = row_ok[:, None] & ((start + cols) < C)[None, :]
        x = plt.load(x_ref.at[:, pl.ds(start, BC)], mask=mask, other=0.0).astype(jnp.float32)
        y = jnp.cumsum(x, axis=1) + carry[:, None]
        # An explicit int32 row slice: under x64 the interpreter cannot mix a `:` (int64) with an int32 start.
        plt.store(y_ref.at[pl.ds(jnp.int32(0), BR), pl.ds(start, BC)], y.astype(y_ref.dtype), mask=mask)
        return jnp.sum(jnp.where(last, y, 0.0), axis=1)

    jax.lax.fori_loop(jnp.int32(0), jnp.int32(pl.cdiv(C, BC)), body, jnp.zeros((BR,), jnp.float32))


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _cumsum(x):
    R, C = x.shape
    BC = min(_pow2(C), MAX_BC)
    BR = max(1, min(TILE // BC, _pow2(R)))
    row_block = pl.BlockSpec((BR, pl.cdiv(C, BC) * BC), lambda i: (i, 0))
    return pl.pallas_call(
        functools.partial(_kernel, R=R, C=C, BR=BR, BC=BC),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(R, BR),),
        in_specs=[row_block],
        out_specs=row_block,
        compiler_params=plt.CompilerParams(num_warps=8 if BR * BC >= 4096 else 4, num_stages=2),
    )(x)


def kernel_function(x):
    return _cumsum(x)
