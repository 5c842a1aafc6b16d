"""RMSNorm over the last dim of [R, C]: x * rsqrt(mean(x^2) + 1e-6) * weight, in float32. One
program per row. Rows up to MAX_FUSED elements (the 8192-wide large shape) are loaded once and
held in registers; longer rows (10007 at the awkward shape) are streamed in LOOP_BLOCK tiles,
one pass for the sum of squares and one to normalise and write (the second read comes from L2).
The eps sits inside the square root, as the task defines it, which matters for rows whose
mean square is itself ~1e-6."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

EPS = 1e-6
MAX_FUSED = 8192
LOOP_BLOCK = 4096


def _single_kernel(x_ref, w_ref, y_ref, *, C, BLOCK):
    mask = jnp.arange(BLOCK, dtype=jnp.int32) < C
    x = plt.load(x_ref, mask=mask, other=0.0).astype(jnp.float32)
    inv_rms = 1.0 / jnp.sqrt(jnp.sum(x * x) / C + EPS)
    w = plt.load(w_ref, mask=mask, other=0.0).astype(jnp.float32)
    plt.store(y_ref, (x * inv_rms * w).astype(y_ref.dtype), mask=mask)


def _loop_kernel(x_ref, w_ref, y_ref, *, C, BLOCK):
    cols = jnp.arange(BLOCK, dtype=jnp.int32)
    n_blocks = jnp.int32(pl.cdiv(C, BLOCK))

    def chunk(j):
        start = pl.multiple_of(j * BLOCK, BLOCK)
        mask = (start + cols) < C
        return start, mask, plt.load(x_ref.at[pl.ds(start, BLOCK)], mask=mask, other=0.0).astype(jnp.float32)

    def add_sq(j, acc):
        x = chunk(j)[2]
        return acc + x * x

    sum_sq = jnp.sum(jax.lax.fori_loop(jnp.int32(0), n_blocks, add_sq, jnp.zeros((BLOCK,), jnp.float32)))
    inv_rms = 1.0 / jnp.sqrt(sum_sq / C + EPS)

    def write(j, carry):
        start, mask, x = chunk(j)
        w = plt.load(w_ref.at[pl.ds(start, BLOCK)], mask=mask, other=0.0).astype(jnp.float32)
        plt.store(y_ref.at[pl.ds(start, BLOCK)], (x * inv_rms * w).astype(y_ref.dtype), mask=mask)
        return carry

    jax.lax.fori_loop(jnp.int32(0), n_blocks, write, jnp.int32(0))


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _rms_norm(x, weight):
    R, C = x.shape
    single = _pow2(C) <= MAX_FUSED
    BLOCK = _pow2(C) if single else LOOP_BLOCK
    padded = pl.cdiv(C, BLOCK) * BLOCK
    row = pl.BlockSpec((None, padded), lambda r: (r, 0))
    return pl.pallas_call(
        functools.partial(_single_kernel if single else _loop_kernel, C=C, BLOCK=BLOCK),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(R,),
        in_specs=[row, pl.BlockSpec((padded,), lambda r: (0,))],
        out_specs=row,
        compiler_params=plt.CompilerParams(num_warps=4 if BLOCK <= 1024 else (8 if BLOCK <= 4096 else 16), num_stages=1),
    )(x, weight)


def kernel_function(x, weight):
    return _rms_norm(x, weight)
