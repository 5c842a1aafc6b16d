"""conv1d, kernel 3, stride 1, zero padding 1, with bias: x [N, Cin, L], weight [Cout, Cin, 3].
An implicit GEMM per sample: out[n] [Cout, L] = sum over the taps k of W[:, :, k] [Cout, Cin] @
X[n] shifted by k - 1 [Cin, L]. A grid of (output-channel tile, position tile, sample); each
program owns a [BCO, BL] output tile and walks Cin in BCI blocks, three pl.dot products per
block: the tap's weights are a stride-3 gather of the [Cout, Cin*3] weight view, the shifted
positions a gather with the two positions outside the sequence masked to 0 (the padding).
Accumulation in float32; float32 operands use precision=HIGHEST (IEEE, no TF32)."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

KSIZE = 3


def _kernel(x_ref, w_ref, b_ref, y_ref, *, Cin, Cout, L, BCO, BL, BCI):
    co = pl.program_id(0) * BCO + jnp.arange(BCO, dtype=jnp.int32)
    pos = pl.program_id(1) * BL + jnp.arange(BL, dtype=jnp.int32)
    ci = jnp.arange(BCI, dtype=jnp.int32)
    co_ok, pos_ok = co < Cout, pos < L
    co_c = jnp.minimum(co, Cout - 1)
    taps = []
    for k in range(KSIZE):
        src = pos + (k - 1)
        taps.append((k, jnp.clip(src, 0, L - 1), pos_ok & (src >= 0) & (src < L)))

    def body(j, acc):
        c = j * BCI + ci
        c_ok = c < Cin
        c_c = jnp.minimum(c, Cin - 1)
        for k, src, ok in taps:
            w = plt.load(w_ref.at[co_c[:, None], (c_c * KSIZE + k)[None, :]], mask=co_ok[:, None] & c_ok[None, :], other=0.0)
            x = plt.load(x_ref.at[c_c[:, None], src[None, :]], mask=c_ok[:, None] & ok[None, :], other=0.0)
            acc = acc + jnp.dot(w, x, precision=jax.lax.Precision.HIGHEST, preferred_element_type=jnp.float32)
        return acc

    acc = jax.lax.fori_loop(jnp.int32(0), jnp.int32(pl.cdiv(Cin, BCI)), body, jnp.zeros((BCO, BL), jnp.float32))
    acc = acc + plt.load(b_ref.at[co_c], mask=co_ok, other=0.0).astype(jnp.float32)[:, None]
    plt.store(y_ref, acc.astype(y_ref.dtype), mask=co_ok[:, None] & pos_ok[None, :])


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _conv1d(x, weight, bias):
    N, Cin, L = x.shape
    Cout = weight.shape[0]
    # pl.dot needs every tile dimension >= 16.
    BCO = min(64, max(16, _pow2(Cout)))
    BL = min(128, max(16, _pow2(L)))
    BCI = 32 if pl.cdiv(Cin, 32) * 32 == pl.cdiv(Cin, 16) * 16 else 16  # the one that pads Cin least
    return pl.pallas_call(
        functools.partial(_kernel, Cin=Cin, Cout=Cout, L=L, BCO=BCO, BL=BL, BCI=BCI),
        out_shape=jax.ShapeDtypeStruct((N, Cout, L), x.dtype),
        grid=(pl.cdiv(Cout, BCO), pl.cdiv(L, BL), N),
        in_specs=[pl.BlockSpec((None, Cin, L), lambda i, j, n: (n, 0, 0)),
                  pl.BlockSpec((Cout, Cin * KSIZE), lambda i, j, n: (0, 0)),
                  pl.BlockSpec((Cout,), lambda i, j, n: (0,))],
        out_specs=pl.BlockSpec((None, BCO, BL), lambda i, j, n: (n, i, j)),
        compiler_params=plt.CompilerParams(num_warps=4, num_stages=3),
    )(x, weight.reshape(Cout, Cin * KSIZE), bias)


def kernel_function(x, weight, bias):
    return _conv1d(x, weight, bias)
