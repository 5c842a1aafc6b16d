"""Element-wise margin ranking loss max(0, -y (x1 - x2) + margin), reduction='none'. One element
per work-item; the difference of the two scores (both near a shared offset) is taken in float,
after widening, and the result rounded once."""

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
__kernel void margin_ranking(__global const uchar *x1, __global const uchar *x2, __global const uchar *y,
                             __global uchar *loss, const long n, const float margin, const int dt) {
    const size_t i = get_global_id(0);
    if (i >= (size_t)n) return;
    const float d = load_elem(x1, i, dt) - load_elem(x2, i, dt);
    store_elem(loss, i, fmax(0.0f, margin - load_elem(y, i, dt) * d), dt);
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x1, x2, y, margin):
    loss = cla.empty_like(x1)
    n = x1.size
    if n:
        prog.margin_ranking(queue, (-(-n // WG) * WG,), (WG,), x1.data, x2.data, y.data, loss.data, np.int64(n),
                            np.float32(margin), np.int32(DTYPE_CODE[x1.dtype]))
    return loss
