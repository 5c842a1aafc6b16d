"""Per-row mean squared error, out[n] = mean_j (pred[n, j] - target[n, j])^2. One 256-wide
work-group per row: each work-item accumulates the squared differences of a strided slice in
float (the difference is taken in float, after widening: predictions sit close to large targets,
and differencing in a 16-bit type would lose it), then a tree in local memory."""

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
void mse_rows(__global const uchar *pred, __global const uchar *target, __global uchar *out, const int D,
              const int dt) {
    __local float red[WG];
    const int lid = get_local_id(0);
    const size_t row = get_group_id(0);
    const size_t base = row * (size_t)D;
    float s = 0.0f;
    for (int j = lid; j < D; j += WG) {
        const float d = load_elem(pred, base + j, dt) - load_elem(target, base + j, dt);
        s = fma(d, d, s);
    }
    red[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = WG / 2; step > 0; step >>= 1) {
        if (lid < step) red[lid] += red[lid + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) store_elem(out, row, red[0] / D, dt);
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, pred, target):
    n, d = pred.shape
    out = cla.empty(queue, (n,), pred.dtype)
    if n:
        prog.mse_rows(queue, (n * WG,), (WG,), pred.data, target.data, out.data, np.int32(d),
                      np.int32(DTYPE_CODE[pred.dtype]))
    return out
