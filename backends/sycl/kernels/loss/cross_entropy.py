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

// (m, s) stands for s * exp(m): merging keeps the larger exponent, so exp never overflows.
inline void merge(float *m, float *s, float m2, float s2) {
    if (m2 == -INFINITY) return;
    if (*m == -INFINITY) { *m = m2; *s = s2; return; }
    const float M = fmax(*m, m2);
    *s = *s * exp(*m - M) + s2 * exp(m2 - M);
    *m = M;
}

// loss[row] = logsumexp(logits[row]) - logits[row, target[row]]. One work-group per row: each
// work-item keeps an online (max, sum of exp) over its strided elements in one pass over the row,
// then the pairs are merged by a tree in local memory.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void cross_entropy_rows(__global const uchar *logits, __global const long *target, __global uchar *loss,
                        const int V, const int dt) {
    __local float red_m[WG], red_s[WG];
    const int lid = get_local_id(0);
    const size_t row = get_group_id(0);
    const size_t base = row * (size_t)V;
    float m = -INFINITY, s = 0.0f;
    for (int j = lid; j < V; j += WG) {
        const float v = load_elem(logits, base + j, dt);
        if (v > m) { s = s * exp(m - v) + 1.0f; m = v; }
        else s += exp(v - m);
    }
    red_m[lid] = m; red_s[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = WG / 2; step > 0; step >>= 1) {
        if (lid < step) {
            float a = red_m[lid], b = red_s[lid];
            merge(&a, &b, red_m[lid + step], red_s[lid + step]);
            red_m[lid] = a; red_s[lid] = b;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        const long t = target[row];
        // torch's ignore_index (-100) gives a zero loss; other targets outside [0, V) are invalid.
        const float out = (t >= 0 && t < V) ? red_m[0] + log(red_s[0]) - load_elem(logits, base + t, dt) : 0.0f;
        store_elem(loss, row, out, dt);
    }
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, logits, target):
    n, v = logits.shape
    loss = cla.empty(queue, (n,), logits.dtype)
    if n:
        prog.cross_entropy_rows(queue, (n * WG,), (WG,), logits.data, target.data, loss.data,
                                np.int32(v), np.int32(DTYPE_CODE[logits.dtype]))
    return loss
