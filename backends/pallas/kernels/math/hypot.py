"""hypot(x, y) = sqrt(x^2 + y^2) without overflow or underflow, for magnitudes from subnormal to
near the dtype's maximum, with IEEE special values (an infinite operand gives +inf even against
NaN, otherwise NaN propagates; hypot(0, 0) = 0).

Squaring the raw values is out of the question (x^2 overflows float32 above 1.8e19 and underflows
below 1e-23), and so is relying on subnormal arithmetic: the Pallas interpreter runs on XLA:CPU,
which flushes subnormal operands and results to zero, and GPUs do the same under fast-math. So
the kernel never lets a subnormal reach a floating-point instruction. Each operand's bits are
decoded into an integer significand M < 2^24 and a power of two E (|x| = M 2^E, subnormals
included); the pair is brought to the larger exponent Emax (the smaller term scaled by 2^(E -
Emax), clamped at 2^-64 where it no longer matters), h' = sqrt(Mx'^2 + My'^2) is taken on
normal float32 numbers in [1, 2^25), and the result h' 2^Emax is encoded straight into the output
format's bits, rounding to nearest even (into the subnormal range where it falls there, to
infinity past the largest finite value). Flat BLOCK-element tiles, the last masked."""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

BLOCK = 2048
# (exponent bits, fraction bits, integer type of the same width) per storage format
FORMATS = {"float32": (8, 23, jnp.int32), "bfloat16": (8, 7, jnp.int16), "float16": (5, 10, jnp.int16)}
MIN_SCALE = -64  # below 2^-64 the smaller term cannot move a float32 result


def _decode(v, ebits, mbits, int_type):
    """|v| = M 2^E with M an integer < 2^(mbits + 1), as (M, E, is_inf, is_nan)."""
    bits = jax.lax.bitcast_convert_type(v, int_type).astype(jnp.int32) & ((1 << (ebits + mbits)) - 1)
    e = bits >> mbits
    frac = bits & ((1 << mbits) - 1)
    top = (1 << ebits) - 1
    M = jnp.where(e > 0, frac | (1 << mbits), frac)
    E = jnp.maximum(e, 1) - ((1 << (ebits - 1)) - 1) - mbits
    return M, E, (e == top) & (frac == 0), (e == top) & (frac != 0)


def _exp2(k):
    """2^k as a float32 built from its bits (k in the normal range)."""
    return jax.lax.bitcast_convert_type((k + 127) << 23, jnp.float32)


def _round_shift(s, k):
    """s / 2^k rounded to nearest even, for 0 <= s < 2^24 and 0 <= k <= 30."""
    q = s >> k
    rem = s - (q << k)
    half = (1 << k) >> 1
    up = (rem > half) | ((rem == half) & (half > 0) & ((q & 1) == 1))
    return q + up.astype(jnp.int32)


def _encode(h, emax, ebits, mbits):
    """Bits of h 2^emax in the target format, h a normal float32 or 0."""
    hb = jax.lax.bitcast_convert_type(h, jnp.int32)
    bias = (1 << (ebits - 1)) - 1
    et = (hb >> 23) - 127 + emax + bias  # the target's biased exponent
    significand = (hb & 0x7FFFFF) | 0x800000
    shift = jnp.minimum((23 - mbits) + jnp.maximum(1 - et, 0), 30)
    bits = (jnp.maximum(et - 1, 0) << mbits) + _round_shift(significand, shift)
    inf = ((1 << ebits) - 1) << mbits
    return jnp.where(h == 0.0, 0, jnp.minimum(bits, inf))


def _kernel(x_ref, y_ref, out_ref, *, n, ebits, mbits, int_type):
    offs = pl.program_id(0) * BLOCK + jnp.arange(BLOCK, dtype=jnp.int32)
    mask = offs < n
    mx, ex, inf_x, nan_x = _decode(plt.load(x_ref, mask=mask, other=0.0), ebits, mbits, int_type)
    my, ey, inf_y, nan_y = _decode(plt.load(y_ref, mask=mask, other=0.0), ebits, mbits, int_type)
    emax = jnp.maximum(ex, ey)
    a = mx.astype(jnp.float32) * _exp2(jnp.maximum(ex - emax, MIN_SCALE))
    b = my.astype(jnp.float32) * _exp2(jnp.maximum(ey - emax, MIN_SCALE))
    bits = _encode(jnp.sqrt(a * a + b * b), emax, ebits, mbits)
    inf = ((1 << ebits) - 1) << mbits
    bits = jnp.where(nan_x | nan_y, inf | (1 << (mbits - 1)), bits)  # quiet NaN
    bits = jnp.where(inf_x | inf_y, inf, bits)
    out = jax.lax.bitcast_convert_type(bits.astype(int_type), out_ref.dtype)
    plt.store(out_ref, out, mask=mask)


@jax.jit
def _hypot(x, y):
    flat_x, flat_y = x.reshape(-1), y.reshape(-1)
    n = flat_x.shape[0]
    ebits, mbits, int_type = FORMATS[str(x.dtype)]
    vec = pl.BlockSpec((BLOCK,), lambda i: (i,))
    out = pl.pallas_call(
        functools.partial(_kernel, n=n, ebits=ebits, mbits=mbits, int_type=int_type),
        out_shape=jax.ShapeDtypeStruct(flat_x.shape, x.dtype),
        grid=(pl.cdiv(n, BLOCK),),
        in_specs=[vec, vec],
        out_specs=vec,
        compiler_params=plt.CompilerParams(num_warps=8, num_stages=1),
    )(flat_x, flat_y)
    return out.reshape(x.shape)


def kernel_function(x, y):
    return _hypot(x, y)
