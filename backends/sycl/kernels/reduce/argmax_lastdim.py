"""torch.max(x, dim=-1) of [R, C]: the row maxima and their int64 indices, the first index on
ties (torch's rule), NaN counting as the maximum (also torch's). One 256-wide work-group per row:
each work-item scans a strided slice in increasing order keeping the first best (value, index),
then a tree in local memory keeps, of two candidates, the larger value or on equal values the
smaller index. The value is the input element itself, so storing it back is exact."""

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

// Does (v, i) beat (m, k)? NaN beats any number; equal values (or two NaNs) go to the lower index.
inline int better(float v, int i, float m, int k) {
    if (isnan(v)) return !isnan(m) || i < k;
    if (isnan(m)) return 0;
    return v > m || (v == m && i < k);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void argmax_rows(__global const uchar *x, __global uchar *values, __global long *indices, const int C, const int dt) {
    __local float red_v[WG];
    __local int red_i[WG];
    const int lid = get_local_id(0);
    const size_t row = get_group_id(0);
    const size_t base = row * (size_t)C;
    float m = -INFINITY;
    int k = C;  // no element yet: any element, -inf included, beats index C
    for (int j = lid; j < C; j += WG) {
        const float v = load_elem(x, base + j, dt);
        if (better(v, j, m, k)) { m = v; k = j; }
    }
    red_v[lid] = m; red_i[lid] = k;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = WG / 2; step > 0; step >>= 1) {
        if (lid < step && better(red_v[lid + step], red_i[lid + step], red_v[lid], red_i[lid])) {
            red_v[lid] = red_v[lid + step];
            red_i[lid] = red_i[lid + step];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        store_elem(values, row, red_v[0], dt);
        indices[row] = red_i[0];
    }
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x):
    rows, cols = x.shape
    values = cla.empty(queue, (rows,), x.dtype)
    indices = cla.empty(queue, (rows,), np.int64)
    if rows:
        prog.argmax_rows(queue, (rows * WG,), (WG,), x.data, values.data, indices.data, np.int32(cols),
                         np.int32(DTYPE_CODE[x.dtype]))
    return values, indices
