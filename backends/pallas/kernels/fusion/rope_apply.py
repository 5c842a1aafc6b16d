"""Rotary position embedding, rotate-half layout: y = x * cos + rotate_half(x) * sin with
rotate_half(x) = (-x[D/2:], x[:D/2]), x [B, S, H, D], cos/sin [S, D] broadcast over batch and
heads. One program per (batch, position) and tile of BH heads: the [BH, D] slab is read as its two
halves (two contiguous loads), the rotation pairs them lane by lane, y1 = x1 c1 - x2 s1 and y2 =
x2 c2 + x1 s2, and the halves are stored back; the position's cos/sin rows are picked by the index
map (row % S). HALF = D/2 rounded up to a power of two (80-wide heads: 40 of 64 lanes masked).
Arithmetic is float32."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

TILE = 4096


def _kernel(x_ref, cos_ref, sin_ref, y_ref, *, H, half, BH, HALF):
    heads = pl.program_id(1) * BH + jnp.arange(BH, dtype=jnp.int32)
    lane_ok = jnp.arange(HALF, dtype=jnp.int32) < half
    mask = (heads < H)[:, None] & lane_ok[None, :]
    # Explicit int32 starts: under x64 the interpreter cannot mix a `:` (int64) with an int32 start.
    rows = pl.ds(jnp.int32(0), BH)
    lo, hi = pl.ds(jnp.int32(0), HALF), pl.ds(jnp.int32(half), HALF)

    def table(ref, part):
        return plt.load(ref.at[part], mask=lane_ok, other=0.0).astype(jnp.float32)[None, :]

    x1 = plt.load(x_ref.at[rows, lo], mask=mask, other=0.0).astype(jnp.float32)
    x2 = plt.load(x_ref.at[rows, hi], mask=mask, other=0.0).astype(jnp.float32)
    y1 = x1 * table(cos_ref, lo) - x2 * table(sin_ref, lo)
    y2 = x2 * table(cos_ref, hi) + x1 * table(sin_ref, hi)
    plt.store(y_ref.at[rows, lo], y1.astype(y_ref.dtype), mask=mask)
    plt.store(y_ref.at[rows, hi], y2.astype(y_ref.dtype), mask=mask)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _rope(x, cos, sin):
    B, S, H, D = x.shape
    half = D // 2
    HALF = _pow2(half)
    BH = max(1, min(_pow2(H), TILE // (2 * HALF)))
    Dp = half + HALF  # the block spans the upper half's padded tile
    table = pl.BlockSpec((None, Dp), lambda r, j: (r % S, 0))
    slab = pl.BlockSpec((None, BH, Dp), lambda r, j: (r, j, 0))
    y = pl.pallas_call(
        functools.partial(_kernel, H=H, half=half, BH=BH, HALF=HALF),
        out_shape=jax.ShapeDtypeStruct((B * S, H, D), x.dtype),
        grid=(B * S, pl.cdiv(H, BH)),
        in_specs=[slab, table, table],
        out_specs=slab,
        compiler_params=plt.CompilerParams(num_warps=4 if BH * HALF <= 1024 else 8, num_stages=1),
    )(x.reshape(B * S, H, D), cos, sin)
    return y.reshape(B, S, H, D)


def kernel_function(x, cos, sin):
    return _rope(x, cos, sin)
