"""2-D average pooling, kernel 3, stride 2, padding 1, count_include_pad=False, on NCHW: each output
is the float mean of the in-image elements its window covers (4 at a corner, 6 on an edge, 9
inside), padding neither summed nor counted. The launch is 2-D, (OH OW, N C): one work-item per
output of one plane; neighbouring work-items read neighbouring windows (stride 2), which the
cache turns into coalesced rows."""

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
__kernel void avg_pool_3x3s2(__global const uchar *x, __global uchar *y, const int H, const int W, const int OH,
                             const int OW, const int dt) {
    const int o = get_global_id(0);
    if (o >= OH * OW) return;
    const size_t plane = get_global_id(1);
    const int oh = o / OW, ow = o % OW;
    const int h0 = max(2 * oh - 1, 0), h1 = min(2 * oh + 2, H);
    const int w0 = max(2 * ow - 1, 0), w1 = min(2 * ow + 2, W);
    const size_t base = plane * H * W;
    float s = 0.0f;
    for (int h = h0; h < h1; h++)
        for (int w = w0; w < w1; w++) s += load_elem(x, base + (size_t)h * W + w, dt);
    store_elem(y, plane * OH * OW + o, s / (float)((h1 - h0) * (w1 - w0)), dt);
}
"""

WG = 256
K, S, P = 3, 2, 1
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x):
    n, c, h, w = x.shape
    oh, ow = (h + 2 * P - K) // S + 1, (w + 2 * P - K) // S + 1
    y = cla.empty(queue, (n, c, oh, ow), x.dtype)
    if y.size:
        prog.avg_pool_3x3s2(queue, (-(-(oh * ow) // WG) * WG, n * c), (WG, 1), x.data, y.data, np.int32(h), np.int32(w),
                            np.int32(oh), np.int32(ow), np.int32(DTYPE_CODE[x.dtype]))
    return y
