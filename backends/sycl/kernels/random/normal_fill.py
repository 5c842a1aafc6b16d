"""Fill [R, cols] with N(mean[r], std[r]^2) from an explicit seed, counter-based: each work-item
draws one Philox4x32-10 block with counter (column / 4, row) and key = the seed, and turns its
four 24-bit uniforms into four standard normals with two Box-Muller transforms, z = sqrt(-2 ln u1)
(cos, sin)(2 pi u2), u1 in (0, 1] so the log is finite; y = mean + std z in float, rounded once.
The value at a position depends only on (seed, row, column)."""

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

__kernel void normal_rows4(__global const uchar *mean, __global const uchar *std_dev, __global uchar *y, const int cols,
                           const ulong seed, const int dt) {
    const uint g = get_global_id(0);
    const int first = g * 4;
    if (first >= cols) return;
    const uint row = get_global_id(1);
    const float mu = load_elem(mean, row, dt), sigma = load_elem(std_dev, row, dt);
    const uint4 r = philox4x32_10((uint4)(g, row, 0u, 0u), (uint2)((uint)seed, (uint)(seed >> 32)));
    const float scale = 1.0f / 16777216.0f;
    const float rad0 = sqrt(-2.0f * log((float)((r.x >> 8) + 1u) * scale));
    const float rad1 = sqrt(-2.0f * log((float)((r.z >> 8) + 1u) * scale));
    const float t0 = 2.0f * (float)(r.y >> 8) * scale, t1 = 2.0f * (float)(r.w >> 8) * scale;
    const float z[4] = {rad0 * cospi(t0), rad0 * sinpi(t0), rad1 * cospi(t1), rad1 * sinpi(t1)};
    const size_t base = (size_t)row * cols;
    for (int k = 0; k < 4 && first + k < cols; k++) store_elem(y, base + first + k, fma(sigma, z[k], mu), dt);
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, mean, std, cols, seed):
    rows = mean.size
    y = cla.empty(queue, (rows, cols), mean.dtype)
    if y.size:
        items = -(-cols // 4)
        prog.normal_rows4(queue, (-(-items // WG) * WG, rows), (WG, 1), mean.data, std.data, y.data, np.int32(cols),
                          np.uint64(seed), np.int32(DTYPE_CODE[mean.dtype]))
    return y
