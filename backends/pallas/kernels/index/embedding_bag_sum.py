"""EmbeddingBag, mode 'sum', with include_last_offset offsets: out[b] = sum of the weight rows
indices[offsets[b]:offsets[b + 1]]. A grid of (bag, feature tile of BD): each program reads its
bag's two offsets, then gathers the bag's rows BJ at a time ([BJ, BD] tiles: BJ row loads in
flight at once, masked past the bag's end) into a float32 accumulator that is reduced over the
BJ axis once at the end. The trip count comes from the offsets (a dynamic loop), so bags of any
size cost what they hold; an empty (or reversed) bag runs no iteration and writes zeros."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

BJ = 16
MAX_BD = 256


def _kernel(w_ref, idx_ref, off_ref, y_ref, *, L, D, BD):
    bag = pl.program_id(0)
    d = pl.program_id(1) * BD + jnp.arange(BD, dtype=jnp.int32)
    d_ok = d < D
    j = jnp.arange(BJ, dtype=jnp.int32)
    start = off_ref[bag].astype(jnp.int32)
    end = off_ref[bag + 1].astype(jnp.int32)

    def body(step, acc):
        pos = start + step * BJ + j
        pos_ok = pos < end
        rows = plt.load(idx_ref.at[jnp.minimum(pos, L - 1)], mask=pos_ok, other=0).astype(jnp.int32)
        tile = plt.load(w_ref.at[rows[:, None], d[None, :]], mask=pos_ok[:, None] & d_ok[None, :], other=0.0)
        return acc + tile.astype(jnp.float32)

    steps = jnp.maximum(end - start + (BJ - 1), 0) // BJ
    acc = jax.lax.fori_loop(jnp.int32(0), steps, body, jnp.zeros((BJ, BD), jnp.float32))
    plt.store(y_ref, jnp.sum(acc, axis=0).astype(y_ref.dtype), mask=d_ok)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _embedding_bag_sum(weight, indices, offsets):
    V, D = weight.shape
    L = indices.shape[0]
    B = offsets.shape[0] - 1
    BD = min(_pow2(D), MAX_BD)
    return pl.pallas_call(
        functools.partial(_kernel, L=L, D=D, BD=BD),
        out_shape=jax.ShapeDtypeStruct((B, D), weight.dtype),
        grid=(B, pl.cdiv(D, BD)),
        # The table, the indices and the offsets are visible to every program (rows are gathered;
        # a bag's span of indices is known only once its offsets are read). The table's feature
        # dim is padded to whole BD tiles so every gathered slice lies inside the block.
        in_specs=[pl.BlockSpec((V, pl.cdiv(D, BD) * BD), lambda b, t: (0, 0)),
                  pl.BlockSpec((L,), lambda b, t: (0,)),
                  pl.BlockSpec((B + 1,), lambda b, t: (0,))],
        out_specs=pl.BlockSpec((None, BD), lambda b, t: (b, t)),
        compiler_params=plt.CompilerParams(num_warps=4, num_stages=2),
    )(weight, indices, offsets)


def kernel_function(weight, indices, offsets):
    return _embedding_bag_sum(weight, indices, offsets)
