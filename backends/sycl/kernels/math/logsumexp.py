"""logsumexp over the last dim of [R, C], rows offset far beyond exp's range. One 256-wide
work-group per row reads it once: each work-item keeps an online pair (m, s) standing for
s exp(m) over its strided elements (rescaling s when the maximum grows, so exp only sees
non-positive arguments), then the pairs are merged by a tree in local memory. Equal maxima add
their sums directly, which keeps +-inf out of inf - inf: all -inf gives -inf, any +inf gives +inf,
a NaN propagates through s."""

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
#define WG 256

// (m, s) += (m2, s2); m is never NaN (comparisons with NaN are false), s carries a NaN along.
inline void merge(float *m, float *s, float m2, float s2) {
    if (m2 == *m) *s += s2;
    else if (m2 > *m) { *s = s2 + *s * exp(*m - m2); *m = m2; }
    else *s += s2 * exp(m2 - *m);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void logsumexp_rows(__global const uchar *x, __global uchar *y, const int C, const int dt) {
    __local float red_m[WG], red_s[WG];
    const int lid = get_local_id(0);
    const size_t row = get_group_id(0);
    const size_t base = row * (size_t)C;
    float m = -INFINITY, s = 0.0f;
    for (int j = lid; j < C; j += WG) {
        const float v = load_elem(x, base + j, dt);
        if (v == m) s += 1.0f;
        else if (v > m) { s = 1.0f + s * exp(m - v); m = v; }
        else s += exp(v - m);
    }
    red_m[lid] = m; red_s[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = WG / 2; step > 0; step >>= 1) {
        if (lid < step) {
            float a = red_m[lid], b = red_s[lid];
            merge(&a, &b, red_m[lid + step], red_s[lid + step]);
            red_m[lid] = a; red_s[lid] = b;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) store_elem(y, row, red_m[0] + log(red_s[0]), dt);
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x):
    rows, cols = x.shape
    y = cla.empty(queue, (rows,), x.dtype)
    if rows:
        prog.logsumexp_rows(queue, (rows * WG,), (WG,), x.data, y.data, np.int32(cols), np.int32(DTYPE_CODE[x.dtype]))
    return y
