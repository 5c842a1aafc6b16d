"""ELU (alpha = 1) of a 2-D tensor: x for x > 0, expm1(x) otherwise. One element per work-item,
computed in float; expm1 rather than exp(x) - 1 keeps the relative accuracy for small |x|, where
exp(x) - 1 cancels."""

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
__kernel void elu(__global const uchar *x, __global uchar *y, const long n, const float alpha, const int dt) {
    const size_t i = get_global_id(0);
    if (i >= (size_t)n) return;
    const float v = load_elem(x, i, dt);
    store_elem(y, i, v > 0.0f ? v : alpha * expm1(v), dt);
}
"""

WG = 256
ALPHA = 1.0
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x):
    y = cla.empty_like(x)
    n = x.size
    if n:
        prog.elu(queue, (-(-n // WG) * WG,), (WG,), x.data, y.data, np.int64(n), np.float32(ALPHA),
                 np.int32(DTYPE_CODE[x.dtype]))
    return y
