"""Per-row cross entropy (reduction='none', ignore_index -100) of logits [N, V] against int64
targets. One program per row: an online logsumexp over BLOCK-wide chunks of the row (a running
max and a rescaled sum per lane, combined at the end), and the target's logit picked out of the
chunk that holds it while the row streams by; loss = logsumexp - logit[target], float32."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

MAX_BLOCK = 2048
IGNORE_INDEX = -100


def _kernel(x_ref, t_ref, loss_ref, *, V, BLOCK):
    cols = jnp.arange(BLOCK, dtype=jnp.int32)
    t = t_ref[0]
    t32 = t.astype(jnp.int32)

    def body(j, state):
        m, s, xt = state
        start = pl.multiple_of(j * BLOCK, BLOCK)
        c = start + cols
        x = plt.load(x_ref.at[pl.ds(start, BLOCK)], mask=c < V, other=-jnp.inf).astype(jnp.float32)
        m_new = jnp.maximum(m, x)
        s = s * jnp.exp(m - m_new) + jnp.exp(x - m_new)
        xt = xt + jnp.sum(jnp.where(c == t32, x, 0.0))
        return m_new, s, xt

    # A finite sentinel keeps exp(m_old - m_new) defined on lanes that only ever saw padding.
    init = (jnp.full((BLOCK,), -3.0e38, jnp.float32), jnp.zeros((BLOCK,), jnp.float32), jnp.float32(0.0))
    m, s, xt = jax.lax.fori_loop(jnp.int32(0), jnp.int32(pl.cdiv(V, BLOCK)), body, init)
    row_max = jnp.max(m)
    lse = row_max + jnp.log(jnp.sum(s * jnp.exp(m - row_max)))
    loss = jnp.where(t == IGNORE_INDEX, 0.0, lse - xt)
    loss_ref[0] = loss.astype(loss_ref.dtype)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _cross_entropy(logits, target):
    N, V = logits.shape
    BLOCK = min(_pow2(V), MAX_BLOCK)
    return pl.pallas_call(
        functools.partial(_kernel, V=V, BLOCK=BLOCK),
        out_shape=jax.ShapeDtypeStruct((N,), logits.dtype),
        grid=(N,),
        in_specs=[pl.BlockSpec((None, pl.cdiv(V, BLOCK) * BLOCK), lambda r: (r, 0)), pl.BlockSpec((1,), lambda r: (r,))],
        out_specs=pl.BlockSpec((1,), lambda r: (r,)),
        compiler_params=plt.CompilerParams(num_warps=8, num_stages=2),
    )(logits, target)


def kernel_function(logits, target):
    return _cross_entropy(logits, target)
