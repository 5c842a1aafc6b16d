"""Dense 3x3 conv2d, stride 1, zero padding 1, with bias, NCHW, as an implicit GEMM per image:
out[n] [Cout, H*W] = sum over the nine taps (kh, kw) of W[:, :, kh, kw] [Cout, Cin] @ X[n]
shifted by (kh - 1, kw - 1) [Cin, H*W]. A grid of (output-channel tile, pixel tile, image); each
program owns a [BCO, BP] output tile and walks Cin in BCI blocks, nine pl.dot products per block
(the tap's weights are a stride-9 gather of the [Cout, Cin*9] weight view, the shifted pixels a
gather of the image with out-of-image taps masked to 0, which is the zero padding). Accumulation
in float32; float32 operands use precision=HIGHEST (IEEE products, no TF32), half operands the
tensor cores. Gather indices are clamped into the image so masked lanes never address outside it."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt


def _kernel(x_ref, w_ref, b_ref, y_ref, *, Cin, Cout, H, W, BCO, BP, BCI):
    HW = H * W
    co = pl.program_id(0) * BCO + jnp.arange(BCO, dtype=jnp.int32)
    p = pl.program_id(1) * BP + jnp.arange(BP, dtype=jnp.int32)
    ci = jnp.arange(BCI, dtype=jnp.int32)
    co_ok, p_ok = co < Cout, p < HW
    co_c = jnp.minimum(co, Cout - 1)
    oh, ow = p // W, p % W
    # Per tap: the source pixel (clamped into the image) and whether it is inside it.
    taps = []
    for kh in range(3):
        ih = oh + (kh - 1)
        h_ok = p_ok & (ih >= 0) & (ih < H)
        ih = jnp.clip(ih, 0, H - 1)
        for kw in range(3):
            iw = ow + (kw - 1)
            ok = h_ok & (iw >= 0) & (iw < W)
            taps.append((kh * 3 + kw, ih * W + jnp.clip(iw, 0, W - 1), ok))

    def body(j, acc):
        c = j * BCI + ci
        c_ok = c < Cin
        c_c = jnp.minimum(c, Cin - 1)
        for t, src, ok in taps:
            w = plt.load(w_ref.at[co_c[:, None], (c_c * 9 + t)[None, :]], mask=co_ok[:, None] & c_ok[None, :], other=0.0)
            x = plt.load(x_ref.at[c_c[:, None], src[None, :]], mask=c_ok[:, None] & ok[None, :], other=0.0)
            acc = acc + jnp.dot(w, x, precision=jax.lax.Precision.HIGHEST, preferred_element_type=jnp.float32)
        return acc

    acc = jax.lax.fori_loop(jnp.int32(0), jnp.int32(pl.cdiv(Cin, BCI)), body, jnp.zeros((BCO, BP), jnp.float32))
    acc = acc + plt.load(b_ref.at[co_c], mask=co_ok, other=0.0).astype(jnp.float32)[:, None]
    plt.store(y_ref, acc.astype(y_ref.dtype), mask=co_ok[:, None] & p_ok[None, :])


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _conv2d_3x3(x, weight, bias):
    N, Cin, H, W = x.shape
    Cout = weight.shape[0]
    HW = H * W
    # pl.dot needs every tile dimension >= 16.
    BCO = min(64, max(16, _pow2(Cout)))
    BP = min(128, max(16, _pow2(HW)))
    BCI = 32 if pl.cdiv(Cin, 32) * 32 == pl.cdiv(Cin, 16) * 16 else 16  # the one that pads Cin least
    y = pl.pallas_call(
        functools.partial(_kernel, Cin=Cin, Cout=Cout, H=H, W=W, BCO=BCO, BP=BP, BCI=BCI),
        out_shape=jax.ShapeDtypeStruct((N, Cout, HW), x.dtype),
        grid=(pl.cdiv(Cout, BCO), pl.cdiv(HW, BP), N),
        in_specs=[pl.BlockSpec((None, Cin, HW), lambda i, j, n: (n, 0, 0)),
                  pl.BlockSpec((Cout, Cin * 9), lambda i, j, n: (0, 0)),
                  pl.BlockSpec((Cout,), lambda i, j, n: (0,))],
        out_specs=pl.BlockSpec((None, BCO, BP), lambda i, j, n: (n, i, j)),
        compiler_params=plt.CompilerParams(num_warps=4, num_stages=3),
    )(x.reshape(N, Cin, HW), weight.reshape(Cout, Cin * 9), bias)
    return y.reshape(N, Cout, H, W)


def kernel_function(x, weight, bias):
    return _conv2d_3x3(x, weight, bias)
