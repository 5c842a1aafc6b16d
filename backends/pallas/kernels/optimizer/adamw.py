"""Three (in general: grads.shape[0]) fused AdamW steps, torch.optim.AdamW semantics (decoupled
weight decay, amsgrad off). Each element's param and moments are read once and written once,
every gradient is read once, and all steps run in registers in float32 whatever the storage
dtype (a bfloat16 state is rounded once, at the end, not after every step). Per step t: param *=
1 - lr wd; exp_avg += (1 - beta1) (g - exp_avg); exp_avg_sq = beta2 exp_avg_sq + (1 - beta2) g^2;
param -= lr / (1 - beta1^t) * exp_avg / (sqrt(exp_avg_sq) / sqrt(1 - beta2^t) + eps). The per-step
scalars are worked out on the host in double precision, as torch.optim.AdamW does, and compiled
in as constants. Flat BLOCK-element tiles, the last masked."""

import functools
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

BLOCK = 1024


def _kernel(p_ref, g_ref, m_ref, v_ref, p_out, m_out, v_out, *, n, beta1, beta2, eps, decay, step_sizes, inv_sqrt_bc2):
    offs = pl.program_id(0) * BLOCK + jnp.arange(BLOCK, dtype=jnp.int32)
    mask = offs < n
    p = plt.load(p_ref, mask=mask, other=0.0).astype(jnp.float32)
    m = plt.load(m_ref, mask=mask, other=0.0).astype(jnp.float32)
    v = plt.load(v_ref, mask=mask, other=0.0).astype(jnp.float32)
    for k, (step_size, inv_bc2) in enumerate(zip(step_sizes, inv_sqrt_bc2)):
        # The step index as an int32 scalar: the interpreter's masked load rejects a Python int index.
        g = plt.load(g_ref.at[jnp.int32(k)], mask=mask, other=0.0).astype(jnp.float32)
        p = p * decay
        m = m + (1.0 - beta1) * (g - m)
        v = beta2 * v + (1.0 - beta2) * (g * g)
        p = p - step_size * (m / (jnp.sqrt(v) * inv_bc2 + eps))
    plt.store(p_out, p.astype(p_out.dtype), mask=mask)
    plt.store(m_out, m.astype(m_out.dtype), mask=mask)
    plt.store(v_out, v.astype(v_out.dtype), mask=mask)


@functools.partial(jax.jit, static_argnames=("step", "lr", "beta1", "beta2", "eps", "weight_decay"))
def _adamw(param, grads, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay):
    n = param.shape[0]
    steps = grads.shape[0]
    ts = [step + 1 + k for k in range(steps)]
    kernel = functools.partial(
        _kernel, n=n, beta1=beta1, beta2=beta2, eps=eps, decay=1.0 - lr * weight_decay,
        step_sizes=tuple(lr / (1.0 - beta1 ** t) for t in ts),
        inv_sqrt_bc2=tuple(1.0 / math.sqrt(1.0 - beta2 ** t) for t in ts))
    vec = pl.BlockSpec((BLOCK,), lambda i: (i,))
    return pl.pallas_call(
        kernel,
        out_shape=tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in (param, exp_avg, exp_avg_sq)),
        grid=(pl.cdiv(n, BLOCK),),
        in_specs=[vec, pl.BlockSpec((steps, BLOCK), lambda i: (0, i)), vec, vec],
        out_specs=(vec, vec, vec),
        compiler_params=plt.CompilerParams(num_warps=4, num_stages=1),
    )(param, grads, exp_avg, exp_avg_sq)


def kernel_function(param, grads, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay):
    return _adamw(param, grads, exp_avg, exp_avg_sq, int(step), float(lr), float(beta1), float(beta2), float(eps),
                  float(weight_decay))
