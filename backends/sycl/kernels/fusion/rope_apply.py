"""Rotary position embedding, rotate-half layout: y = x cos + rotate_half(x) sin, x [B, S, H, D],
cos and sin [S, D] broadcast over B and H. Each work-item owns one pair (d, d + D/2) of one head:
it reads both halves once and writes both outputs, y[d] = x[d] cos[d] - x[d + D/2] sin[d] and
y[d + D/2] = x[d + D/2] cos[d + D/2] + x[d] sin[d + D/2]. The launch is 2-D, (H D/2, B S): the
token's position s comes from the second index without dividing a flat one, and neighbouring
work-items touch neighbouring elements."""

import numpy as np
import pyopencl.array as cla

OPENCL_SOURCE = r"""
// Storage types: dt 0 = float, 1 = half (IEEE binary16 through vload_half / vstore_half, which need
// no cl_khr_fp16), 2 = bfloat16 as raw ushort bits. Arithmetic is always float.
inline float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

inline ushort float_to_bf16(float f) {
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);  // NaN stays NaN
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);                   // round to nearest even
}

inline float load_elem(__global const uchar *p, size_t i, int dt) {
    if (dt == 0) return ((__global const float *)p)[i];
    if (dt == 1) return vload_half(i, (__global const half *)p);
    return bf16_to_float(((__global const ushort *)p)[i]);
}

inline void store_elem(__global uchar *p, size_t i, float v, int dt) {
    if (dt == 0) ((__global float *)p)[i] = v;
    else if (dt == 1) vstore_half_rte(v, i, (__global half *)p);
    else ((__global ushort *)p)[i] = float_to_bf16(v);
}
__kernel void rope_pairs(__global const uchar *x, __global const uchar *cos_t, __global const uchar *sin_t,
                         __global uchar *y, const int S, const int H, const int D, const int dt) {
    const int half_d = D / 2;
    const int j = get_global_id(0);  // h * D/2 + d
    if (j >= H * half_d) return;
    const size_t token = get_global_id(1);  // b * S + s
    const int h = j / half_d, d = j % half_d;
    const size_t xi = (token * H + h) * D + d;
    const size_t ti = (token % S) * D + d;
    const float lo = load_elem(x, xi, dt), hi = load_elem(x, xi + half_d, dt);
    store_elem(y, xi, lo * load_elem(cos_t, ti, dt) - hi * load_elem(sin_t, ti, dt), dt);
    store_elem(y, xi + half_d, hi * load_elem(cos_t, ti + half_d, dt) + lo * load_elem(sin_t, ti + half_d, dt), dt);
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x, cos, sin):
    b, s, h, d = x.shape
    y = cla.empty_like(x)
    if x.size:
        pairs = h * (d // 2)
        prog.rope_pairs(queue, (-(-pairs // WG) * WG, b * s), (WG, 1), x.data, cos.data, sin.data, y.data,
                        np.int32(s), np.int32(h), np.int32(d), np.int32(DTYPE_CODE[x.dtype]))
    return y
