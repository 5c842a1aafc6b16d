import numpy as np
import pyopencl.array as cla

OPENCL_SOURCE = r"""
// out[t, :] = weight[indices[t], :], copied as raw bits (4-byte or 2-byte elements), so the gather
// is exact for every dtype. One work-group of WG work-items per token strides over the row:
// consecutive work-items touch consecutive elements. An index outside [0, V) (torch raises there)
// yields a zero row rather than a read out of bounds.
#define WG 128

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void embedding_gather(__global const long *indices, __global const uchar *weight, __global uchar *out,
                      const long V, const int D, const int elem_bytes) {
    const size_t t = get_group_id(0);
    const long r = indices[t];
    const int ok = r >= 0 && r < V;
    if (elem_bytes == 4) {
        __global const uint *src = (__global const uint *)weight + (ok ? r : 0) * (size_t)D;
        __global uint *dst = (__global uint *)out + t * (size_t)D;
        for (int j = get_local_id(0); j < D; j += WG) dst[j] = ok ? src[j] : 0u;
    } else {
        __global const ushort *src = (__global const ushort *)weight + (ok ? r : 0) * (size_t)D;
        __global ushort *dst = (__global ushort *)out + t * (size_t)D;
        for (int j = get_local_id(0); j < D; j += WG) dst[j] = ok ? src[j] : (ushort)0;
    }
}
"""

WG = 128


def kernel_function(prog, queue, indices, weight):
    v, d = weight.shape
    out = cla.empty(queue, tuple(indices.shape) + (d,), weight.dtype)
    tokens = indices.size
    if tokens and d:
        prog.embedding_gather(queue, (tokens * WG,), (WG,), indices.data, weight.data, out.data,
                              np.int64(v), np.int32(d), np.int32(weight.dtype.itemsize))
    return out
