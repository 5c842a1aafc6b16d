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
// 2-D max pooling, kernel 3, stride 2, padding 1 with implicit -inf padding (positions outside the
// input are skipped), NCHW, one output per work-item. A NaN in the window wins, as in torch.
__kernel void max_pool_3x3s2(__global const uchar *x, __global uchar *y, const long total,
                             const int H, const int W, const int OH, const int OW, const int dt) {
    const size_t o = get_global_id(0);
    if (o >= (size_t)total) return;
    const size_t plane = o / ((size_t)OH * OW);
    const int rem = (int)(o - plane * OH * OW);
    const int oh = rem / OW, ow = rem % OW;
    const size_t base = plane * (size_t)H * W;
    float m = -INFINITY;
    for (int i = 0; i < 3; i++) {
        const int h = oh * 2 - 1 + i;
        if (h < 0 || h >= H) continue;
        for (int j = 0; j < 3; j++) {
            const int w = ow * 2 - 1 + j;
            if (w < 0 || w >= W) continue;
            const float v = load_elem(x, base + (size_t)h * W + w, dt);
            if (v > m || isnan(v)) m = v;
            if (isnan(m)) break;
        }
    }
    store_elem(y, o, m, dt);
}
"""

WG = 256
K, S, P = 3, 2, 1
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x):
    n, c, h, w = x.shape
    oh, ow = (h + 2 * P - K) // S + 1, (w + 2 * P - K) // S + 1
    y = cla.empty(queue, (n, c, oh, ow), x.dtype)
    total = y.size
    if total:
        prog.max_pool_3x3s2(queue, (-(-total // WG) * WG,), (WG,), x.data, y.data, np.int64(total),
                            np.int32(h), np.int32(w), np.int32(oh), np.int32(ow), np.int32(DTYPE_CODE[x.dtype]))
    return y
