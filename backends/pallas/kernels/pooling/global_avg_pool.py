"""Global average pooling x.mean(dim=(2, 3)) of NCHW -> [N, C]. Each (n, c) plane is a row of H*W
contiguous elements: each program owns BR planes and streams them in [BR, BC] tiles (BC = the
plane rounded up to a power of two, capped at 1024) into a float32 accumulator of the tile's
shape, reduced across columns once and divided by H*W. Many tiny planes (13 x 1) share a
program; a 56 x 56 plane is four 1024-wide steps. Rows and columns past the ends are masked."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

TILE = 4096
MAX_BC = 1024


def _kernel(x_ref, y_ref, *, R, HW, BR, BC):
    rows = pl.program_id(0) * BR + jnp.arange(BR, dtype=jnp.int32)
    row_ok = rows < R
    cols = jnp.arange(BC, dtype=jnp.int32)

    def body(j, acc):
        start = pl.multiple_of(j * BC, BC)
        mask = row_ok[:, None] & ((start + cols) < HW)[None, :]
        return acc + plt.load(x_ref.at[:, pl.ds(start, BC)], mask=mask, other=0.0).astype(jnp.float32)

    acc = jax.lax.fori_loop(jnp.int32(0), jnp.int32(pl.cdiv(HW, BC)), body, jnp.zeros((BR, BC), jnp.float32))
    plt.store(y_ref, (jnp.sum(acc, axis=1) / HW).astype(y_ref.dtype), mask=row_ok)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _global_avg_pool(x):
    N, C, H, W = x.shape
    R, HW = N * C, H * W
    BC = min(_pow2(HW), MAX_BC)
    BR = max(1, min(TILE // BC, _pow2(R)))
    y = pl.pallas_call(
        functools.partial(_kernel, R=R, HW=HW, BR=BR, BC=BC),
        out_shape=jax.ShapeDtypeStruct((R,), x.dtype),
        grid=(pl.cdiv(R, BR),),
        in_specs=[pl.BlockSpec((BR, pl.cdiv(HW, BC) * BC), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((BR,), lambda i: (i,)),
        compiler_params=plt.CompilerParams(num_warps=8, num_stages=2),
    )(x.reshape(R, HW))
    return y.reshape(N, C)


def kernel_function(x):
    return _global_avg_pool(x)
