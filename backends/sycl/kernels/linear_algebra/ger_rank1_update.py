"""BLAS ger, out = A + alpha x y^T, out of place. Bandwidth-bound on A: the launch is 2-D,
(N, M), so a work-group row reads and writes a contiguous stretch of one row of A, x[r] is one
broadcast load per group and y[c] comes from cache. Computed in float, rounded once."""

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
__kernel void ger_rows(__global const uchar *A, __global const uchar *x, __global const uchar *y,
                       __global uchar *out, const int N, const float alpha, const int dt) {
    const int c = get_global_id(0);
    if (c >= N) return;
    const size_t r = get_global_id(1);
    const size_t i = r * N + c;
    store_elem(out, i, fma(alpha * load_elem(x, r, dt), load_elem(y, c, dt), load_elem(A, i, dt)), dt);
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, a, x, y, alpha):
    m, n = a.shape
    out = cla.empty_like(a)
    if out.size:
        prog.ger_rows(queue, (-(-n // WG) * WG, m), (WG, 1), a.data, x.data, y.data, out.data, np.int32(n),
                      np.float32(alpha), np.int32(DTYPE_CODE[a.dtype]))
    return out
