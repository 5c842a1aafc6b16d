"""EmbeddingBag(mode='sum'): out[b] = sum of weight rows indices[offsets[b]:offsets[b + 1]], empty
bags (and reversed offsets) give zeros. One 128-wide work-group per bag: the bag's indices are
uniform loads for the whole group, and each work-item accumulates its strided columns of every
looked-up row in float (each row read with coalesced loads), rounding once at the end. An index
outside [0, V) (torch raises) adds nothing rather than reading out of bounds."""

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
#define WG 128

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void embedding_bag_sum(__global const uchar *weight, __global const long *indices, __global const long *offsets,
                       __global uchar *out, const long V, const int D, const int dt) {
    const size_t bag = get_group_id(0);
    const long start = offsets[bag], end = offsets[bag + 1];
    for (int j = get_local_id(0); j < D; j += WG) {
        float s = 0.0f;
        for (long t = start; t < end; t++) {
            const long r = indices[t];
            if (r >= 0 && r < V) s += load_elem(weight, (size_t)r * D + j, dt);
        }
        store_elem(out, bag * D + j, s, dt);
    }
}
"""

WG = 128
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, weight, indices, offsets):
    v, d = weight.shape
    bags = offsets.size - 1
    out = cla.empty(queue, (bags, d), weight.dtype)
    if out.size:
        prog.embedding_bag_sum(queue, (bags * WG,), (WG,), weight.data, indices.data, offsets.data, out.data,
                               np.int64(v), np.int32(d), np.int32(DTYPE_CODE[weight.dtype]))
    return out
