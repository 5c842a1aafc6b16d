"""BLAS gemv, y_out = alpha A x + beta y, A [M, N] row-major. Purely bandwidth-bound on A: one
256-wide work-group per row streams it with coalesced reads (x, 64 KiB at most, comes from cache),
each work-item accumulating a strided dot product in float, then a tree in local memory; the
first work-item applies alpha and beta and rounds once."""

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

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_rows(__global const uchar *A, __global const uchar *x, __global const uchar *y, __global uchar *out,
               const int N, const float alpha, const float beta, const int dt) {
    __local float red[WG];
    const int lid = get_local_id(0);
    const size_t row = get_group_id(0);
    const size_t base = row * (size_t)N;
    float s = 0.0f;
    for (int j = lid; j < N; j += WG) s = fma(load_elem(A, base + j, dt), load_elem(x, j, dt), s);
    red[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = WG / 2; step > 0; step >>= 1) {
        if (lid < step) red[lid] += red[lid + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) store_elem(out, row, alpha * red[0] + beta * load_elem(y, row, dt), dt);
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, a, x, y, alpha, beta):
    m, n = a.shape
    out = cla.empty_like(y)
    if m:
        prog.gemv_rows(queue, (m * WG,), (WG,), a.data, x.data, y.data, out.data, np.int32(n), np.float32(alpha),
                       np.float32(beta), np.int32(DTYPE_CODE[a.dtype]))
    return out
