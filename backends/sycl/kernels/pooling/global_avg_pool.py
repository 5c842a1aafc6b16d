"""Global average pooling, x.mean(dim=(2, 3)) of NCHW -> [N, C]: each (n, c) plane is contiguous,
so one 256-wide work-group reduces one plane, each work-item summing a strided slice in float
(coalesced), then a tree in local memory; the mean is rounded to the output type once."""

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
void mean_planes(__global const uchar *x, __global uchar *y, const int HW, const int dt) {
    __local float red[WG];
    const int lid = get_local_id(0);
    const size_t plane = get_group_id(0);
    const size_t base = plane * (size_t)HW;
    float s = 0.0f;
    for (int j = lid; j < HW; j += WG) s += load_elem(x, base + j, dt);
    red[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = WG / 2; step > 0; step >>= 1) {
        if (lid < step) red[lid] += red[lid + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) store_elem(y, plane, red[0] / HW, dt);
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x):
    n, c, h, w = x.shape
    y = cla.empty(queue, (n, c), x.dtype)
    if y.size:
        prog.mean_planes(queue, (n * c * WG,), (WG,), x.data, y.data, np.int32(h * w), np.int32(DTYPE_CODE[x.dtype]))
    return y
