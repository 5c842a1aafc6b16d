"""Depthwise 3x3 convolution (groups = C), stride 1, zero padding 1, with bias, NCHW. A grid of
(plane n*C + c, tile of BH output rows); the index maps hand each program its channel's nine
weights and bias (plane % C). Each [BH, BW] output tile (BW = W rounded up to a power of two) is
the bias plus nine gathered taps times their weight, accumulated in float32; taps outside the
plane are clamped to a valid address and zeroed."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

TILE = 4096


def _kernel(x_ref, w_ref, b_ref, y_ref, *, H, W, BH, BW):
    oh = pl.program_id(1) * BH + jnp.arange(BH, dtype=jnp.int32)
    ow = jnp.arange(BW, dtype=jnp.int32)
    acc = jnp.full((BH, BW), b_ref[0].astype(jnp.float32), jnp.float32)
    for kh in range(3):
        ih = oh + (kh - 1)
        h_ok = (ih >= 0) & (ih < H)
        ih = jnp.clip(ih, 0, H - 1)
        for kw in range(3):
            iw = ow + (kw - 1)
            ok = h_ok[:, None] & ((iw >= 0) & (iw < W))[None, :]
            v = x_ref[ih[:, None], jnp.clip(iw, 0, W - 1)[None, :]].astype(jnp.float32)
            acc = acc + jnp.where(ok, v, 0.0) * w_ref[kh * 3 + kw].astype(jnp.float32)
    plt.store(y_ref, acc.astype(y_ref.dtype), mask=(oh < H)[:, None] & (ow < W)[None, :])


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _depthwise_conv2d(x, weight, bias):
    N, C, H, W = x.shape
    BW = _pow2(W)
    BH = max(1, min(TILE // BW, _pow2(H)))
    y = pl.pallas_call(
        functools.partial(_kernel, H=H, W=W, BH=BH, BW=BW),
        out_shape=jax.ShapeDtypeStruct((N * C, H, W), x.dtype),
        grid=(N * C, pl.cdiv(H, BH)),
        in_specs=[pl.BlockSpec((None, H, W), lambda p, r: (p, 0, 0)),
                  pl.BlockSpec((None, 9), lambda p, r: (p % C, 0)),
                  pl.BlockSpec((1,), lambda p, r: (p % C,))],
        out_specs=pl.BlockSpec((None, BH, BW), lambda p, r: (p, r, 0)),
        compiler_params=plt.CompilerParams(num_warps=4, num_stages=1),
    )(x.reshape(N * C, H, W), weight.reshape(C, 9), bias)
    return y.reshape(N, C, H, W)


def kernel_function(x, weight, bias):
    return _depthwise_conv2d(x, weight, bias)
