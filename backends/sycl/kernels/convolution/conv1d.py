"""conv1d, kernel 3, stride 1, zero padding 1, with bias, as an implicit GEMM: out[n] = W [Cout,
Cin*3] @ im2col(x[n]) [Cin*3, L]. A 16x16 work-group computes a 64 (Cout) x 64 (L) tile, each
work-item a 4x4 block in registers; Cin is walked 8 channels at a time, staging the 8 x 66 input
window (the tile plus its halo of one on each side) and the 64 x 24 weights in local memory, so
each input element is read from global memory once per Cout tile instead of 3 x 64 times.
Accumulation in float (float32 means IEEE float32, fma only)."""

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
#define BM 64   // output channels per tile
#define BL 64   // positions per tile
#define CK 8    // input channels per step
#define T 16

__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void conv1d_k3(__global const uchar *x, __global const uchar *w, __global const uchar *bias, __global uchar *y,
               const int Cin, const int Cout, const int L, const int dt) {
    __local float Xs[CK][BL + 2];
    __local float Ws[CK * 3][BM + 1];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int lid = ty * T + tx;
    const int l0 = get_group_id(0) * BL, co0 = get_group_id(1) * BM;
    const int n = get_group_id(2);
    const size_t xbase = (size_t)n * Cin * L;
    float acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
    for (int c0 = 0; c0 < Cin; c0 += CK) {
        for (int e = lid; e < CK * (BL + 2); e += T * T) {
            const int c = e / (BL + 2), p = e % (BL + 2);
            const int gc = c0 + c, gl = l0 + p - 1;
            Xs[c][p] = (gc < Cin && gl >= 0 && gl < L) ? load_elem(x, xbase + (size_t)gc * L + gl, dt) : 0.0f;
        }
        // weights [Cout, Cin, 3]: the 24 taps of one output channel are contiguous in memory
        for (int e = lid; e < BM * CK * 3; e += T * T) {
            const int co = e / (CK * 3), r = e % (CK * 3);
            const int gco = co0 + co, gc = c0 + r / 3;
            Ws[r][co] = (gco < Cout && gc < Cin) ? load_elem(w, ((size_t)gco * Cin + gc) * 3 + r % 3, dt) : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int c = 0; c < CK; c++) {
            for (int t = 0; t < 3; t++) {
                float a[4], b[4];
                for (int i = 0; i < 4; i++) a[i] = Ws[c * 3 + t][ty + T * i];
                for (int j = 0; j < 4; j++) b[j] = Xs[c][tx + T * j + t];
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < 4; i++) {
        const int co = co0 + ty + T * i;
        if (co >= Cout) continue;
        const float b = load_elem(bias, co, dt);
        for (int j = 0; j < 4; j++) {
            const int l = l0 + tx + T * j;
            if (l < L) store_elem(y, ((size_t)n * Cout + co) * L + l, acc[i][j] + b, dt);
        }
    }
}
"""

BM = BL = 64
T = 16
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x, weight, bias):
    n, cin, length = x.shape
    cout = weight.shape[0]
    y = cla.empty(queue, (n, cout, length), x.dtype)
    if y.size:
        gsize = (-(-length // BL) * T, -(-cout // BM) * T, n)
        prog.conv1d_k3(queue, gsize, (T, T, 1), x.data, weight.data, bias.data, y.data, np.int32(cin),
                       np.int32(cout), np.int32(length), np.int32(DTYPE_CODE[x.dtype]))
    return y
