"""y = bernoulli(p) element-wise (0.0 / 1.0 in the dtype of p) from an explicit seed, with a
counter-based generator of its own: the random number of element i is a keyed integer hash of i
(a Weyl multiply, then murmur3's 32-bit finalizer twice around two 32-bit keys that splitmix64
draws from the seed on the host), so it depends only on (seed, i): deterministic, stateless, any
tiling. The top 24 bits give u in [0, 1) with resolution 2^-24, and y = 1 where u < p: p = 0
never fires, p = 1 always does, and probabilities within 2^-9 of 1 (a quarter of the inputs)
keep their meaning, since p is compared in float32 against a 24-bit uniform. Flat BLOCK-element
tiles, the last masked."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

BLOCK = 4096

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


def _kernel(key_ref, p_ref, y_ref, *, n):
    offs = pl.program_id(0) * BLOCK + jnp.arange(BLOCK, dtype=jnp.int32)
    mask = offs < n
    p = plt.load(p_ref, mask=mask, other=0.0).astype(jnp.float32)
    y = jnp.where(_uniform24(offs, key_ref[0], key_ref[1]) < p, 1.0, 0.0)
    plt.store(y_ref, y.astype(y_ref.dtype), mask=mask)


@jax.jit
def _bernoulli(p, keys):
    flat = p.reshape(-1)
    n = flat.shape[0]
    y = pl.pallas_call(
        functools.partial(_kernel, n=n),
        out_shape=jax.ShapeDtypeStruct(flat.shape, flat.dtype),
        grid=(pl.cdiv(n, BLOCK),),
        in_specs=[pl.BlockSpec((2,), lambda i: (0,)), pl.BlockSpec((BLOCK,), lambda i: (i,))],
        out_specs=pl.BlockSpec((BLOCK,), lambda i: (i,)),
        compiler_params=plt.CompilerParams(num_warps=8, num_stages=1),
    )(keys, flat)
    return y.reshape(p.shape)


def _keys(seed):
    # splitmix64 of the seed, on the host: two well-mixed 32-bit keys for the kernel's hash.
    z = (int(seed) * _GOLDEN + _GOLDEN) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z ^= z >> 31
    return jnp.asarray([z & 0xFFFFFFFF, z >> 32], dtype=jnp.uint32)


def kernel_function(p, seed):
    return _bernoulli(p, _keys(seed))
