"""Element-wise binary cross entropy with logits and a per-class pos_weight, reduction 'none':
loss = (1 - t) x + (1 + (pos_weight[c] - 1) t) softplus(-x), with softplus(-x) = max(-x, 0) +
log1p(exp(-|x|)), which neither overflows nor loses the tiny tail for logits out to +-150 (the
literal log(sigmoid(x)) is -inf below x ~ -88, log(1 - sigmoid(x)) already above x ~ 17). A 2-D
grid of [BR, BC] tiles; the pos_weight tile is indexed by the column block. Float32 arithmetic,
one rounding to the storage dtype."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

TILE = 4096
MAX_BC = 1024


def _kernel(x_ref, t_ref, pw_ref, y_ref, *, N, C, BR, BC):
    rows = pl.program_id(0) * BR + jnp.arange(BR, dtype=jnp.int32)
    cols = pl.program_id(1) * BC + jnp.arange(BC, dtype=jnp.int32)
    col_ok = cols < C
    mask = (rows < N)[:, None] & col_ok[None, :]
    x = plt.load(x_ref, mask=mask, other=0.0).astype(jnp.float32)
    t = plt.load(t_ref, mask=mask, other=0.0).astype(jnp.float32)
    pw = plt.load(pw_ref, mask=col_ok, other=1.0).astype(jnp.float32)[None, :]
    softplus_neg = jnp.maximum(-x, 0.0) + jnp.log1p(jnp.exp(-jnp.abs(x)))
    loss = (1.0 - t) * x + (1.0 + (pw - 1.0) * t) * softplus_neg
    plt.store(y_ref, loss.astype(y_ref.dtype), mask=mask)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _bce_with_logits(logits, target, pos_weight):
    N, C = logits.shape
    BC = min(_pow2(C), MAX_BC)
    BR = max(1, min(TILE // BC, _pow2(N)))
    tile = pl.BlockSpec((BR, BC), lambda i, j: (i, j))
    return pl.pallas_call(
        functools.partial(_kernel, N=N, C=C, BR=BR, BC=BC),
        out_shape=jax.ShapeDtypeStruct(logits.shape, logits.dtype),
        grid=(pl.cdiv(N, BR), pl.cdiv(C, BC)),
        in_specs=[tile, tile, pl.BlockSpec((BC,), lambda i, j: (j,))],
        out_specs=tile,
        compiler_params=plt.CompilerParams(num_warps=8, num_stages=1),
    )(logits, target, pos_weight)


def kernel_function(logits, target, pos_weight):
    return _bce_with_logits(logits, target, pos_weight)
