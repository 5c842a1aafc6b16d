"""Residual add + LayerNorm: h = x + residual, y = LayerNorm(h; weight, bias, eps 1e-5) over the
last dim of [T, D]; returns (y, h). One program per token row: x and residual are read once, h is
formed in float32 and kept in registers (BLOCK = D rounded up to a power of two; Falcon's 4544
pads to 8192, masked), written out rounded to the storage dtype, and normalised from the
unrounded float32 sum with a two-pass (centred) variance over the registers, so rows whose mean
is several standard deviations off zero lose nothing to cancellation."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

EPS = 1e-5


def _kernel(x_ref, r_ref, w_ref, b_ref, y_ref, h_ref, *, D, BLOCK):
    cols = jnp.arange(BLOCK, dtype=jnp.int32)
    mask = cols < D
    h = (plt.load(x_ref, mask=mask, other=0.0).astype(jnp.float32)
         + plt.load(r_ref, mask=mask, other=0.0).astype(jnp.float32))
    plt.store(h_ref, h.astype(h_ref.dtype), mask=mask)
    mean = jnp.sum(h) / D
    centred = jnp.where(mask, h - mean, 0.0)
    rstd = 1.0 / jnp.sqrt(jnp.sum(centred * centred) / D + EPS)
    w = plt.load(w_ref, mask=mask, other=0.0).astype(jnp.float32)
    b = plt.load(b_ref, mask=mask, other=0.0).astype(jnp.float32)
    plt.store(y_ref, (centred * rstd * w + b).astype(y_ref.dtype), mask=mask)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _add_layernorm(x, residual, weight, bias):
    T, D = x.shape
    BLOCK = _pow2(D)
    row = pl.BlockSpec((None, BLOCK), lambda t: (t, 0))
    vec = pl.BlockSpec((BLOCK,), lambda t: (0,))
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return pl.pallas_call(
        functools.partial(_kernel, D=D, BLOCK=BLOCK),
        out_shape=(out, out),
        grid=(T,),
        in_specs=[row, row, vec, vec],
        out_specs=(row, row),
        compiler_params=plt.CompilerParams(num_warps=4 if BLOCK <= 1024 else (8 if BLOCK <= 4096 else 16), num_stages=1),
    )(x, residual, weight, bias)


def kernel_function(x, residual, weight, bias):
    return _add_layernorm(x, residual, weight, bias)
