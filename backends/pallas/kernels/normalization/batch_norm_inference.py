"""BatchNorm2d inference on NCHW: y = (x - running_mean) / sqrt(running_var + 1e-5) * weight +
bias, folded per channel into y = x * scale + shift. The N*C planes are independent: a grid of
(plane, tile of BLOCK elements of the plane), where the index maps hand each program its
channel's four statistics (plane % C); the program folds them into scale and shift in float32
(one square root and one division per program, not per element) and streams its tile with one
multiply-add per element. BLOCK is the plane rounded up to a power of two, capped at 4096 (a
56 x 56 plane is one tile); the tail is masked."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

EPS = 1e-5
MAX_BLOCK = 4096


def _kernel(x_ref, mean_ref, var_ref, w_ref, b_ref, y_ref, *, HW, BLOCK):
    offs = pl.program_id(1) * BLOCK + jnp.arange(BLOCK, dtype=jnp.int32)
    mask = offs < HW
    scale = w_ref[0].astype(jnp.float32) / jnp.sqrt(var_ref[0].astype(jnp.float32) + EPS)
    shift = b_ref[0].astype(jnp.float32) - mean_ref[0].astype(jnp.float32) * scale
    x = plt.load(x_ref, mask=mask, other=0.0).astype(jnp.float32)
    plt.store(y_ref, (x * scale + shift).astype(y_ref.dtype), mask=mask)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _batch_norm(x, running_mean, running_var, weight, bias):
    N, C, H, W = x.shape
    HW = H * W
    BLOCK = min(_pow2(HW), MAX_BLOCK)
    channel = pl.BlockSpec((1,), lambda p, j: (p % C,))
    plane = pl.BlockSpec((None, BLOCK), lambda p, j: (p, j))
    y = pl.pallas_call(
        functools.partial(_kernel, HW=HW, BLOCK=BLOCK),
        out_shape=jax.ShapeDtypeStruct((N * C, HW), x.dtype),
        grid=(N * C, pl.cdiv(HW, BLOCK)),
        in_specs=[plane, channel, channel, channel, channel],
        out_specs=plane,
        compiler_params=plt.CompilerParams(num_warps=4 if BLOCK <= 1024 else 8, num_stages=1),
    )(x.reshape(N * C, HW), running_mean, running_var, weight, bias)
    return y.reshape(N, C, H, W)


def kernel_function(x, running_mean, running_var, weight, bias):
    return _batch_norm(x, running_mean, running_var, weight, bias)
