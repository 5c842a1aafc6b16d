"""1-D max pooling on [N, C, L], kernel 4, stride 2, padding 1: the padding is -inf, so a window is
the max of its in-range elements only (inputs are mostly negative: padding with 0 would show).
The launch is 2-D, (OL, N C): one work-item per output of one row. NaN propagates, as in torch;
the result is an input element, so storing it back is exact."""

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
__kernel void max_pool_k4s2(__global const uchar *x, __global uchar *y, const int L, const int OL, const int dt) {
    const int o = get_global_id(0);
    if (o >= OL) return;
    const size_t row = get_global_id(1);
    const int l0 = max(2 * o - 1, 0), l1 = min(2 * o + 3, L);
    float m = -INFINITY;
    for (int l = l0; l < l1; l++) {
        const float v = load_elem(x, row * L + l, dt);
        if (v > m || isnan(v)) m = v;
        if (isnan(m)) break;
    }
    store_elem(y, row * OL + o, m, dt);
}
"""

WG = 256
K, S, P = 4, 2, 1
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x):
    n, c, length = x.shape
    out_len = (length + 2 * P - K) // S + 1
    y = cla.empty(queue, (n, c, out_len), x.dtype)
    if y.size:
        prog.max_pool_k4s2(queue, (-(-out_len // WG) * WG, n * c), (WG, 1), x.data, y.data, np.int32(length),
                           np.int32(out_len), np.int32(DTYPE_CODE[x.dtype]))
    return y
