"""2x nearest-neighbour upsampling, NCHW: out[..., i, j] = x[..., i // 2, j // 2] (an integer
factor: the source index is exact, no float scale). A grid of (plane, tile of BOH output rows);
each [BOH, BOW] output tile (BOW = 2W rounded up to a power of two) is one gather from its plane
and one contiguous store, so the 4x larger output is written at full width while each input row
is read twice from L1. Bit-exact; edges masked."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

TILE = 4096


def _kernel(x_ref, y_ref, *, H, W, BOH, BOW):
    oh = pl.program_id(1) * BOH + jnp.arange(BOH, dtype=jnp.int32)
    ow = jnp.arange(BOW, dtype=jnp.int32)
    mask = (oh < 2 * H)[:, None] & (ow < 2 * W)[None, :]
    src_h = jnp.minimum(oh // 2, H - 1)  # clamped: masked lanes still address the plane
    src_w = jnp.minimum(ow // 2, W - 1)
    plt.store(y_ref, plt.load(x_ref.at[src_h[:, None], src_w[None, :]], mask=mask), mask=mask)


def _pow2(n):
    return 1 << max(0, (n - 1).bit_length())


@jax.jit
def _upsample_nearest2d(x):
    N, C, H, W = x.shape
    OH, OW = 2 * H, 2 * W
    BOW = _pow2(OW)
    BOH = max(1, min(TILE // BOW, _pow2(OH)))
    y = pl.pallas_call(
        functools.partial(_kernel, H=H, W=W, BOH=BOH, BOW=BOW),
        out_shape=jax.ShapeDtypeStruct((N * C, OH, OW), x.dtype),
        grid=(N * C, pl.cdiv(OH, BOH)),
        in_specs=[pl.BlockSpec((None, H, W), lambda p, t: (p, 0, 0))],
        out_specs=pl.BlockSpec((None, BOH, BOW), lambda p, t: (p, t, 0)),
        compiler_params=plt.CompilerParams(num_warps=4, num_stages=1),
    )(x.reshape(N * C, H, W))
    return y.reshape(N, C, OH, OW)


def kernel_function(x):
    return _upsample_nearest2d(x)
