"""y = bernoulli(p) elementwise with an explicit seed: y = 1 where a uniform u in [0, 1) falls below
p. Each work-item draws one Philox4x32-10 block (counter = its id, key = the seed) for 4
consecutive elements; u is the top 24 bits of a word over 2^24, so P(u < p) = p to float32
resolution (a p of 1 - 2^-11 keeps its 2^-11 chance of a zero), p = 0 never gives 1 and p = 1
always does. p is clamped to [0, 1] and compared in float."""

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
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
// counter-based generator, so a draw depends only on (seed, counter), whatever the launch shape.
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

inline uint4 philox4x32_10(uint4 c, uint2 k) {
    for (int r = 0; r < 10; r++) {
        const uint hi0 = mul_hi(PHILOX_M0, c.x), lo0 = PHILOX_M0 * c.x;
        const uint hi1 = mul_hi(PHILOX_M1, c.z), lo1 = PHILOX_M1 * c.z;
        c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
        k += (uint2)(PHILOX_W0, PHILOX_W1);
    }
    return c;
}

__kernel void bernoulli4(__global const uchar *p, __global uchar *y, const long n, const ulong seed, const int dt) {
    const ulong g = get_global_id(0);
    const size_t first = g * 4;
    if (first >= (size_t)n) return;
    const uint4 r = philox4x32_10((uint4)((uint)g, (uint)(g >> 32), 0u, 0u), (uint2)((uint)seed, (uint)(seed >> 32)));
    const uint words[4] = {r.x, r.y, r.z, r.w};
    for (int k = 0; k < 4; k++) {
        const size_t i = first + k;
        if (i >= (size_t)n) break;
        const float u = (float)(words[k] >> 8) * (1.0f / 16777216.0f);
        store_elem(y, i, u < clamp(load_elem(p, i, dt), 0.0f, 1.0f) ? 1.0f : 0.0f, dt);
    }
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, p, seed):
    y = cla.empty_like(p)
    n = p.size
    if n:
        items = -(-n // 4)
        prog.bernoulli4(queue, (-(-items // WG) * WG,), (WG,), p.data, y.data, np.int64(n), np.uint64(seed),
                        np.int32(DTYPE_CODE[p.dtype]))
    return y
