"""Three (in general: grads.shape[0]) fused Lion steps with decoupled weight decay (Chen et al.
2023, as in lion-pytorch). Per step, with g the step's gradient: c = beta1 exp_avg + (1 - beta1)
g; param = param (1 - lr wd) - lr sign(c) (sign(0) = 0); exp_avg = beta2 exp_avg + (1 - beta2) g.
param and exp_avg are read once and written once, each gradient read once, and the three steps
run in registers in float32 (a bfloat16 state is rounded once, at the end). Hyperparameters are
compiled in. Flat BLOCK-element tiles, the last masked."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

BLOCK = 1024


def _kernel(p_ref, g_ref, m_ref, p_out, m_out, *, n, steps, lr, beta1, beta2, decay):
    offs = pl.program_id(0) * BLOCK + jnp.arange(BLOCK, dtype=jnp.int32)
    mask = offs < n
    p = plt.load(p_ref, mask=mask, other=0.0).astype(jnp.float32)
    m = plt.load(m_ref, mask=mask, other=0.0).astype(jnp.float32)
    for k in range(steps):
        # The step index as an int32 scalar: the interpreter's masked load rejects a Python int index.
        g = plt.load(g_ref.at[jnp.int32(k)], mask=mask, other=0.0).astype(jnp.float32)
        c = beta1 * m + (1.0 - beta1) * g
        p = p * decay - lr * jnp.sign(c)
        m = beta2 * m + (1.0 - beta2) * g
    plt.store(p_out, p.astype(p_out.dtype), mask=mask)
    plt.store(m_out, m.astype(m_out.dtype), mask=mask)


@functools.partial(jax.jit, static_argnames=("lr", "beta1", "beta2", "weight_decay"))
def _lion(param, grads, exp_avg, lr, beta1, beta2, weight_decay):
    n = param.shape[0]
    steps = grads.shape[0]
    vec = pl.BlockSpec((BLOCK,), lambda i: (i,))
    return pl.pallas_call(
        functools.partial(_kernel, n=n, steps=steps, lr=lr, beta1=beta1, beta2=beta2, decay=1.0 - lr * weight_decay),
        out_shape=tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in (param, exp_avg)),
        grid=(pl.cdiv(n, BLOCK),),
        in_specs=[vec, pl.BlockSpec((steps, BLOCK), lambda i: (0, i)), vec],
        out_specs=(vec, vec),
        compiler_params=plt.CompilerParams(num_warps=4, num_stages=1),
    )(param, grads, exp_avg)


def kernel_function(param, grads, exp_avg, lr, beta1, beta2, weight_decay):
    return _lion(param, grads, exp_avg, float(lr), float(beta1), float(beta2), float(weight_decay))
