"""Fill [R, cols] with U[low[r], high[r]) from an explicit seed, counter-based: the uniform at
position i = r * cols + c is a keyed integer hash of i (a Weyl multiply, then murmur3's 32-bit
finalizer twice around two 32-bit keys that splitmix64 draws from the seed on the host), so it
depends only on (seed, i): the same seed gives the same uniforms for any bounds, any tiling. The
top 24 bits give u in [0, 1) (float32 resolution), y = low + (high - low) u in float32, capped at
high against the rounding of the product. A 2-D grid of [BR, BC] tiles; each program's bounds
are picked by its row block."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

TILE = 4096
MAX_BC = 1024

_WEYL, _M1, _M2, _GOLDEN = 0x9E3779B1, 0x85EBCA6B, 0xC2B2AE35, 0x9E3779B97F4A7C15


def _fmix32(h):
    h = h ^ (h >> 16)
    h = h * jnp.uint32(_M1)
    h = h ^ (h >> 13)
    h = h * jnp.uint32(_M2)
    return h ^ (h >> 16)


def _uniform24(index, k0, k1):
    """u in [0, 1) on a 2^-24 grid, a function of (index, keys) only."""
    h = _fmix32((index.astype(jnp.uint32) * jnp.uint32(_WEYL)) ^ k0)
    h = _fmix32(h ^ k1)
    return (h >> 8).astype(jnp.int32).astype(jnp.float32) * (1.0 / 16777216.0)


def _kernel(key_ref, lo_ref, hi_ref, y_ref, *, R, cols, BR, BC):
    rows = pl.program_id(0) * BR + jnp.arange(BR, dtype=jnp.int32)
    c = pl.program_id(1) * BC + jnp.arange(BC, dtype=jnp.int32)
    row_ok = rows < R
    lo = plt.load(lo_ref, mask=row_ok, other=0.0).astype(jnp.float32)[:, None]
    hi = plt.load(hi_ref, mask=row_ok, other=1.0).astype(jnp.float32)[:, None]
    u = _uniform24(rows[:, None] * cols + c[None, :], key_ref[0], key_ref[1])
    y = jnp.minimum(lo + (hi - lo) * u, hi)
    plt.store(y_ref, y.astype(y_ref.dtype), mask=row_ok[:, None] & (c < cols)[None, :])


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@functools.partial(jax.jit, static_argnames=("cols",))
def _uniform_fill(low, high, cols, keys):
    R = low.shape[0]
    BC = min(_pow2(cols), MAX_BC)
    BR = max(1, min(TILE // BC, _pow2(R)))
    bound = pl.BlockSpec((BR,), lambda i, j: (i,))
    return pl.pallas_call(
        functools.partial(_kernel, R=R, cols=cols, BR=BR, BC=BC),
        out_shape=jax.ShapeDtypeStruct((R, cols), low.dtype),
        grid=(pl.cdiv(R, BR), pl.cdiv(cols, BC)),
        in_specs=[pl.BlockSpec((2,), lambda i, j: (0,)), bound, bound],
        out_specs=pl.BlockSpec((BR, BC), lambda i, j: (i, j)),
        compiler_params=plt.CompilerParams(num_warps=8, num_stages=1),
    )(keys, low, high)


def _keys(seed):
    # splitmix64 of the seed, on the host: two well-mixed 32-bit keys for the kernel's hash.
    z = (int(seed) * _GOLDEN + _GOLDEN) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z ^= z >> 31
    return jnp.asarray([z & 0xFFFFFFFF, z >> 32], dtype=jnp.uint32)


def kernel_function(low, high, cols, seed):
    return _uniform_fill(low, high, int(cols), _keys(seed))
