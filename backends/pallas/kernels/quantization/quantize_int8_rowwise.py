"""Per-row symmetric int8 quantization, as the task's contract writes it: scale = max(amax,
1e-8) / 127 in float32, q = clamp(round_half_even(x / scale), -127, 127). One program per row,
two passes over BLOCK-wide chunks (amax, then quantize). The Triton lowering has no round, so
half-to-even rounding is floor(v + 0.5) with exact ties moved to the even neighbour."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

MAX_BLOCK = 4096


def _round_half_even(v):
    r = jnp.floor(v + 0.5)
    tie = (r - v) == 0.5
    odd = (r - 2.0 * jnp.floor(r * 0.5)) != 0.0
    return jnp.where(tie & odd, r - 1.0, r)


def _kernel(x_ref, q_ref, s_ref, *, C, BLOCK):
    cols = jnp.arange(BLOCK, dtype=jnp.int32)
    n_blocks = jnp.int32(pl.cdiv(C, BLOCK))

    def chunk(j):
        start = pl.multiple_of(j * BLOCK, BLOCK)
        mask = (start + cols) < C
        return start, mask, plt.load(x_ref.at[pl.ds(start, BLOCK)], mask=mask, other=0.0).astype(jnp.float32)

    def amax(j, acc):
        return jnp.maximum(acc, jnp.abs(chunk(j)[2]))

    peak = jnp.max(jax.lax.fori_loop(jnp.int32(0), n_blocks, amax, jnp.zeros((BLOCK,), jnp.float32)))
    scale = jnp.maximum(peak, 1e-8) / 127.0
    s_ref[0] = scale

    def quantize(j, carry):
        start, mask, x = chunk(j)
        q = jnp.clip(_round_half_even(x / scale), -127.0, 127.0)
        plt.store(q_ref.at[pl.ds(start, BLOCK)], q.astype(jnp.int8), mask=mask)
        return carry

    jax.lax.fori_loop(jnp.int32(0), n_blocks, quantize, jnp.int32(0))


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _quantize(x):
    R, C = x.shape
    BLOCK = min(_pow2(C), MAX_BLOCK)
    row = pl.BlockSpec((None, pl.cdiv(C, BLOCK) * BLOCK), lambda r: (r, 0))
    return pl.pallas_call(
        functools.partial(_kernel, C=C, BLOCK=BLOCK),
        out_shape=(jax.ShapeDtypeStruct((R, C), jnp.int8), jax.ShapeDtypeStruct((R,), jnp.float32)),
        grid=(R,),
        in_specs=[row],
        out_specs=(row, pl.BlockSpec((1,), lambda r: (r,))),
        compiler_params=plt.CompilerParams(num_warps=8, num_stages=2),
    )(x)


def kernel_function(x):
    return _quantize(x)
