"""Dropout with an explicit seed and a counter-based RNG of its own: the random number of element
i is a keyed integer hash of i (murmur3's 32-bit finalizer, applied twice around two 32-bit keys
drawn from the seed on the host), so it depends only on (seed, i): deterministic per seed, no
state, any tiling. The top 24 bits give u in [0, 1); an element is kept when u >= p and scaled
by 1 / (1 - p) in float32. The tensor is cut into flat BLOCK-element tiles, the last one masked."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

BLOCK = 4096

_M1, _M2, _GOLDEN = 0x85EBCA6B, 0xC2B2AE35, 0x9E3779B97F4A7C15


def _fmix32(h):
    h = h ^ (h >> 16)
    h = h * jnp.uint32(_M1)
    h = h ^ (h >> 13)
    h = h * jnp.uint32(_M2)
    return h ^ (h >> 16)


def _kernel(key_ref, x_ref, y_ref, *, n, p, scale):
    offs = pl.program_id(0) * BLOCK + jnp.arange(BLOCK, dtype=jnp.int32)
    mask = offs < n
    h = _fmix32(offs.astype(jnp.uint32) ^ key_ref[0])
    h = _fmix32(h + key_ref[1])
    u = (h >> 8).astype(jnp.int32).astype(jnp.float32) * (1.0 / 16777216.0)
    x = plt.load(x_ref, mask=mask, other=0.0).astype(jnp.float32)
    y = jnp.where(u >= p, x * scale, 0.0)
    plt.store(y_ref, y.astype(y_ref.dtype), mask=mask)


@functools.partial(jax.jit, static_argnames=("p",))
def _dropout(x, key, p):
    flat = x.reshape(-1)
    n = flat.shape[0]
    y = pl.pallas_call(
        functools.partial(_kernel, n=n, p=p, scale=1.0 / (1.0 - p)),
        out_shape=jax.ShapeDtypeStruct(flat.shape, flat.dtype),
        grid=(pl.cdiv(n, BLOCK),),
        in_specs=[pl.BlockSpec((2,), lambda i: (0,)), pl.BlockSpec((BLOCK,), lambda i: (i,))],
        out_specs=pl.BlockSpec((BLOCK,), lambda i: (i,)),
        compiler_params=plt.CompilerParams(num_warps=8, num_stages=1),
    )(key, flat)
    return y.reshape(x.shape)


def _keys(seed):
    # splitmix64 of the seed, on the host: two well-mixed 32-bit keys for the kernel's hash.
    z = (int(seed) * _GOLDEN + _GOLDEN) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z ^= z >> 31
    return jnp.asarray([z & 0xFFFFFFFF, z >> 32], dtype=jnp.uint32)


def kernel_function(x, p, seed):
    return _dropout(x, _keys(seed), float(p))
