"""1x1 conv2d with bias on NCHW: for each image, y[n] = W [Cout, Cin] @ x[n] [Cin, H W] + bias, a
GEMM whose right operand is the image itself (pixels contiguous), so nothing is transposed or
copied. One 16x16 work-group per 64 (Cout) x 128 (pixel) tile of one image (the image is the
third launch dimension); each work-item accumulates 4 channels x 8 pixels in registers. Cin is
walked 16 at a time with both tiles staged in local memory (W transposed). Accumulation in float
(float32 means IEEE float32)."""

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
#define BM 64    // output channels per tile
#define BN 128   // pixels per tile
#define BK 16
#define T 16

__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void conv1x1_tiled(__global const uchar *x, __global const uchar *w, __global const uchar *bias, __global uchar *y,
                   const int Cin, const int Cout, const int P, const int dt) {
    __local float Ws[BK][BM + 4];
    __local float Xs[BK][BN];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int lid = ty * T + tx;
    const int p0 = get_group_id(0) * BN, co0 = get_group_id(1) * BM;
    const size_t n = get_group_id(2);
    const size_t xbase = n * Cin * P, ybase = n * Cout * P;
    float acc[4][8];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < Cin; k0 += BK) {
        for (int e = lid; e < BM * BK; e += T * T) {
            const int r = e / BK, kk = e % BK;
            const int gco = co0 + r, gk = k0 + kk;
            Ws[kk][r] = (gco < Cout && gk < Cin) ? load_elem(w, (size_t)gco * Cin + gk, dt) : 0.0f;
        }
        for (int e = lid; e < BK * BN; e += T * T) {
            const int kk = e / BN, c = e % BN;
            const int gk = k0 + kk, gp = p0 + c;
            Xs[kk][c] = (gk < Cin && gp < P) ? load_elem(x, xbase + (size_t)gk * P + gp, dt) : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < BK; kk++) {
            float a[4], b[8];
            for (int i = 0; i < 4; i++) a[i] = Ws[kk][ty + T * i];
            for (int j = 0; j < 8; j++) b[j] = Xs[kk][tx + T * j];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 8; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < 4; i++) {
        const int co = co0 + ty + T * i;
        if (co >= Cout) continue;
        const float b = load_elem(bias, co, dt);
        for (int j = 0; j < 8; j++) {
            const int p = p0 + tx + T * j;
            if (p < P) store_elem(y, ybase + (size_t)co * P + p, acc[i][j] + b, dt);
        }
    }
}
"""

BM, BN = 64, 128
T = 16
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x, weight, bias):
    n, cin, h, w = x.shape
    cout = weight.shape[0]
    y = cla.empty(queue, (n, cout, h, w), x.dtype)
    if y.size:
        pixels = h * w
        gsize = (-(-pixels // BN) * T, -(-cout // BM) * T, n)
        prog.conv1x1_tiled(queue, gsize, (T, T, 1), x.data, weight.data, bias.data, y.data, np.int32(cin),
                           np.int32(cout), np.int32(pixels), np.int32(DTYPE_CODE[x.dtype]))
    return y
