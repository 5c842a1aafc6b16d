"""Three (in general: grads.shape[0]) fused SGD steps with Nesterov momentum and L2 weight decay
(torch.optim.SGD, nesterov=True, dampening 0). Per step, with g the step's gradient: g += wd
param; buf = momentum buf + g; param -= lr (g + momentum buf). param and the buffer are read once
and written once, each gradient read once, and the three steps run in registers in float32 (a
bfloat16 state is rounded once, at the end). Hyperparameters are compiled in. Flat BLOCK-element
tiles, the last masked."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

BLOCK = 1024


def _kernel(p_ref, g_ref, b_ref, p_out, b_out, *, n, steps, lr, momentum, weight_decay):
    offs = pl.program_id(0) * BLOCK + jnp.arange(BLOCK, dtype=jnp.int32)
    mask = offs < n
    p = plt.load(p_ref, mask=mask, other=0.0).astype(jnp.float32)
    buf = plt.load(b_ref, mask=mask, other=0.0).astype(jnp.float32)
    for k in range(steps):
        # The step index as an int32 scalar: the interpreter's masked load rejects a Python int index.
        g = plt.load(g_ref.at[jnp.int32(k)], mask=mask, other=0.0).astype(jnp.float32) + weight_decay * p
        buf = momentum * buf + g
        p = p - lr * (g + momentum * buf)
    plt.store(p_out, p.astype(p_out.dtype), mask=mask)
    plt.store(b_out, buf.astype(b_out.dtype), mask=mask)


@functools.partial(jax.jit, static_argnames=("lr", "momentum", "weight_decay"))
def _sgd_nesterov(param, grads, momentum_buffer, lr, momentum, weight_decay):
    n = param.shape[0]
    steps = grads.shape[0]
    vec = pl.BlockSpec((BLOCK,), lambda i: (i,))
    return pl.pallas_call(
        functools.partial(_kernel, n=n, steps=steps, lr=lr, momentum=momentum, weight_decay=weight_decay),
        out_shape=tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in (param, momentum_buffer)),
        grid=(pl.cdiv(n, BLOCK),),
        in_specs=[vec, pl.BlockSpec((steps, BLOCK), lambda i: (0, i)), vec],
        out_specs=(vec, vec),
        compiler_params=plt.CompilerParams(num_warps=4, num_stages=1),
    )(param, grads, momentum_buffer)


def kernel_function(param, grads, momentum_buffer, lr, momentum, weight_decay):
    return _sgd_nesterov(param, grads, momentum_buffer, float(lr), float(momentum), float(weight_decay))
