"""Embedding lookup weight[indices]. The tokens are flattened; a 2-D grid of [BT tokens, BD
features] tiles, each loading BT indices and gathering the BD-wide slices of those rows (a row
vector and a column vector index the table) and copying them out. Values are copied, never
converted: bit-exact. Tiles past the last token or feature are masked."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

TILE = 4096
MAX_BD = 1024


def _kernel(idx_ref, w_ref, y_ref, *, T, D, BT, BD):
    t = pl.program_id(0) * BT + jnp.arange(BT, dtype=jnp.int32)
    d0 = pl.multiple_of(pl.program_id(1) * BD, BD)
    d = d0 + jnp.arange(BD, dtype=jnp.int32)
    t_ok = t < T
    rows = plt.load(idx_ref, mask=t_ok, other=0).astype(jnp.int32)
    mask = t_ok[:, None] & (d < D)[None, :]
    plt.store(y_ref, plt.load(w_ref.at[rows[:, None], d[None, :]], mask=mask), mask=mask)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _embedding(indices, weight):
    V, D = weight.shape
    flat = indices.reshape(-1)
    T = flat.shape[0]
    BD = min(_pow2(D), MAX_BD)
    BT = max(1, min(TILE // BD, _pow2(T)))
    y = pl.pallas_call(
        functools.partial(_kernel, T=T, D=D, BT=BT, BD=BD),
        out_shape=jax.ShapeDtypeStruct((T, D), weight.dtype),
        grid=(pl.cdiv(T, BT), pl.cdiv(D, BD)),
        # The whole table is visible to every program (rows are gathered); its feature dim is
        # padded to whole BD tiles so every slice the kernel takes lies inside the block.
        in_specs=[pl.BlockSpec((BT,), lambda i, j: (i,)), pl.BlockSpec((V, pl.cdiv(D, BD) * BD), lambda i, j: (0, 0))],
        out_specs=pl.BlockSpec((BT, BD), lambda i, j: (i, j)),
        compiler_params=plt.CompilerParams(num_warps=4, num_stages=1),
    )(flat, weight)
    return y.reshape(*indices.shape, D)


def kernel_function(indices, weight):
    return _embedding(indices, weight)
