"""Per-column symmetric int8 quantization of W [K, N] (input-major): scale[n] = max(max_k |W[k, n]|,
1e-8) / 127, q = clamp(rint(W / scale), -127, 127) (rint: half to even). The reduction runs down
the columns, so it is split over many work-groups: (1) a 32x8 work-group takes 32 neighbouring
columns over one stretch of rows (coalesced 32-element reads) and writes their partial maxima;
(2) one work-item per column combines its partials into the scale; (3) an elementwise pass, 2-D
(N, K), writes q, dividing by the column's scale (a true division, as the reference does)."""

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
#define TX 32
#define TY 8

__kernel __attribute__((reqd_work_group_size(TX, TY, 1)))
void column_amax_partial(__global const uchar *w, __global float *partial, const int K, const int N,
                         const int rows_per_split, const int dt) {
    __local float red[TY][TX];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int col = get_group_id(0) * TX + tx;
    const int split = get_group_id(1);
    const int k0 = split * rows_per_split, k1 = min(k0 + rows_per_split, K);
    float m = 0.0f;
    if (col < N)
        for (int k = k0 + ty; k < k1; k += TY) m = fmax(m, fabs(load_elem(w, (size_t)k * N + col, dt)));
    red[ty][tx] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (ty == 0 && col < N) {
        for (int r = 1; r < TY; r++) m = fmax(m, red[r][tx]);
        partial[(size_t)split * N + col] = m;
    }
}

__kernel void column_scales(__global const float *partial, __global float *scale, const int N, const int splits) {
    const int col = get_global_id(0);
    if (col >= N) return;
    float m = 0.0f;
    for (int s = 0; s < splits; s++) m = fmax(m, partial[(size_t)s * N + col]);
    scale[col] = fmax(m, 1e-8f) / 127.0f;
}

__kernel void quantize_columns(__global const uchar *w, __global const float *scale, __global char *q, const int N,
                               const int dt) {
    const int col = get_global_id(0);
    if (col >= N) return;
    const size_t i = get_global_id(1) * (size_t)N + col;
    q[i] = (char)clamp(rint(load_elem(w, i, dt) / scale[col]), -127.0f, 127.0f);
}
"""

TX, TY = 32, 8
WG = 256
ROWS_PER_SPLIT = 512  # rows per partial maximum: 56 splits for K = 28672, ~1800 work-groups at N = 8192
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, w):
    k, n = w.shape
    q = cla.empty(queue, (k, n), np.int8)
    scale = cla.empty(queue, (n,), np.float32)
    if n:
        splits = max(1, -(-k // ROWS_PER_SPLIT))
        partial = cla.empty(queue, (splits, n), np.float32)
        dt = np.int32(DTYPE_CODE[w.dtype])
        prog.column_amax_partial(queue, (-(-n // TX) * TX, splits * TY), (TX, TY), w.data, partial.data, np.int32(k),
                                 np.int32(n), np.int32(ROWS_PER_SPLIT), dt)
        prog.column_scales(queue, (-(-n // WG) * WG,), (WG,), partial.data, scale.data, np.int32(n), np.int32(splits))
        if k:
            prog.quantize_columns(queue, (-(-n // WG) * WG, k), (WG, 1), w.data, scale.data, q.data, np.int32(n), dt)
    return q, scale
