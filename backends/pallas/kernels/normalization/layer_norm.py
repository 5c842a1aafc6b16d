"""F.layer_norm over the last dim of [R, C] with weight and bias, eps 1e-5. One program per row.
Statistics are taken about the row's first element: x - x0 is exact in float32 for values of
similar magnitude, so a large common offset (rows at mean 100) costs no precision in the mean or
the centred (two-pass) variance. Rows up to MAX_FUSED elements are held in registers and read
once; longer rows are streamed in LOOP_BLOCK tiles, three passes."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

EPS = 1e-5
MAX_FUSED = 8192
LOOP_BLOCK = 4096


def _single_kernel(x_ref, w_ref, b_ref, y_ref, *, C, BLOCK):
    cols = jnp.arange(BLOCK, dtype=jnp.int32)
    mask = cols < C
    x0 = x_ref[0].astype(jnp.float32)
    d = jnp.where(mask, plt.load(x_ref, mask=mask, other=0.0).astype(jnp.float32) - x0, 0.0)
    mean_d = jnp.sum(d) / C
    xc = jnp.where(mask, d - mean_d, 0.0)
    rstd = jax.lax.rsqrt(jnp.sum(xc * xc) / C + EPS)
    w = plt.load(w_ref, mask=mask, other=0.0).astype(jnp.float32)
    b = plt.load(b_ref, mask=mask, other=0.0).astype(jnp.float32)
    plt.store(y_ref, (xc * rstd * w + b).astype(y_ref.dtype), mask=mask)


def _loop_kernel(x_ref, w_ref, b_ref, y_ref, *, C, BLOCK):
    cols = jnp.arange(BLOCK, dtype=jnp.int32)
    x0 = x_ref[0].astype(jnp.float32)
    n_blocks = jnp.int32(pl.cdiv(C, BLOCK))

    def chunk(j):
        start = pl.multiple_of(j * BLOCK, BLOCK)
        mask = (start + cols) < C
        x = plt.load(x_ref.at[pl.ds(start, BLOCK)], mask=mask, other=0.0).astype(jnp.float32)
        return start, mask, jnp.where(mask, x - x0, 0.0)

    def add_d(j, acc):
        return acc + chunk(j)[2]

    mean_d = jnp.sum(jax.lax.fori_loop(jnp.int32(0), n_blocks, add_d, jnp.zeros((BLOCK,), jnp.float32))) / C

    def add_sq(j, acc):
        _, mask, d = chunk(j)
        xc = jnp.where(mask, d - mean_d, 0.0)
        return acc + xc * xc

    var = jnp.sum(jax.lax.fori_loop(jnp.int32(0), n_blocks, add_sq, jnp.zeros((BLOCK,), jnp.float32))) / C
    rstd = jax.lax.rsqrt(var + EPS)

    def write(j, carry):
        start, mask, d = chunk(j)
        w = plt.load(w_ref.at[pl.ds(start, BLOCK)], mask=mask, other=0.0).astype(jnp.float32)
        b = plt.load(b_ref.at[pl.ds(start, BLOCK)], mask=mask, other=0.0).astype(jnp.float32)
        plt.store(y_ref.at[pl.ds(start, BLOCK)], ((d - mean_d) * rstd * w + b).astype(y_ref.dtype), mask=mask)
        return carry

    jax.lax.fori_loop(jnp.int32(0), n_blocks, write, jnp.int32(0))


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _layer_norm(x, weight, bias):
    R, C = x.shape
    single = _pow2(C) <= MAX_FUSED
    BLOCK = _pow2(C) if single else LOOP_BLOCK
    padded = pl.cdiv(C, BLOCK) * BLOCK
    kernel = _single_kernel if single else _loop_kernel
    row = pl.BlockSpec((None, padded), lambda r: (r, 0))
    vec = pl.BlockSpec((padded,), lambda r: (0,))
    return pl.pallas_call(
        functools.partial(kernel, C=C, BLOCK=BLOCK),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(R,),
        in_specs=[row, vec, vec],
        out_specs=row,
        compiler_params=plt.CompilerParams(num_warps=4 if BLOCK <= 1024 else (8 if BLOCK <= 4096 else 16), num_stages=1),
    )(x, weight, bias)


def kernel_function(x, weight, bias):
    return _layer_norm(x, weight, bias)
