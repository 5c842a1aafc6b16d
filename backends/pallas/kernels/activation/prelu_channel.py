"""PReLU with one slope per channel on NCHW: x if x > 0 else weight[c] * x. The N*C planes are
independent rows of H*W elements: a grid of (plane, tile of BLOCK elements of the plane), where
the weight's index map hands each program its channel's slope (plane % C), so the kernel never
divides an element index to find its channel. BLOCK is the plane size rounded up to a power of
two, capped at 4096 (a 56 x 56 plane is one tile); the tail is masked. Arithmetic is float32."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

MAX_BLOCK = 4096


def _prelu_kernel(x_ref, w_ref, y_ref, *, HW, BLOCK):
    offs = pl.program_id(1) * BLOCK + jnp.arange(BLOCK, dtype=jnp.int32)
    mask = offs < HW
    x = plt.load(x_ref, mask=mask, other=0.0).astype(jnp.float32)
    slope = w_ref[0].astype(jnp.float32)
    plt.store(y_ref, jnp.where(x > 0.0, x, slope * x).astype(y_ref.dtype), mask=mask)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _prelu(x, weight):
    N, C, H, W = x.shape
    HW = H * W
    BLOCK = min(_pow2(HW), MAX_BLOCK)
    y = pl.pallas_call(
        functools.partial(_prelu_kernel, HW=HW, BLOCK=BLOCK),
        out_shape=jax.ShapeDtypeStruct((N * C, HW), x.dtype),
        grid=(N * C, pl.cdiv(HW, BLOCK)),
        in_specs=[pl.BlockSpec((None, BLOCK), lambda p, j: (p, j)),
                  pl.BlockSpec((1,), lambda p, j: (p % C,))],
        out_specs=pl.BlockSpec((None, BLOCK), lambda p, j: (p, j)),
        compiler_params=plt.CompilerParams(num_warps=4 if BLOCK <= 1024 else 8, num_stages=1),
    )(x.reshape(N * C, HW), weight)
    return y.reshape(N, C, H, W)


def kernel_function(x, weight):
    return _prelu(x, weight)
