"""Per-row int8 dequantization x[n, k] = q[n, k] * scale[n] to the dtype named by out_dtype. The
product is formed in float (exact operands) and rounded once to the output type. The launch is
2-D, (K, N): the row's scale is one broadcast load per work-group row, and the int8 reads and the
writes are coalesced."""

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
__kernel void dequantize_rows(__global const char *q, __global const float *scale, __global uchar *x, const int K,
                              const int dt) {
    const int k = get_global_id(0);
    if (k >= K) return;
    const size_t row = get_global_id(1);
    const size_t i = row * K + k;
    store_elem(x, i, (float)q[i] * scale[row], dt);
}
"""

WG = 256
# The output dtype by the task's name for it, as stored in the Array (bfloat16 as its uint16 bits).
OUT_DTYPE = {"float32": np.dtype(np.float32), "float16": np.dtype(np.float16), "bfloat16": np.dtype(np.uint16)}
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, q, scale, out_dtype):
    n, k = q.shape
    dtype = OUT_DTYPE[out_dtype]
    x = cla.empty(queue, (n, k), dtype)
    if x.size:
        prog.dequantize_rows(queue, (-(-k // WG) * WG, n), (WG, 1), q.data, scale.data, x.data, np.int32(k),
                             np.int32(DTYPE_CODE[dtype]))
    return x
