"""Dense 3x3 conv2d, stride 1, zero padding 1, with bias, on NCHW, as an implicit GEMM over
K = Cin x 9. A 16x16 work-group computes 64 output channels x a 4-row, 16-column block of one
image's pixels; each work-item holds 4 channels x 4 rows (one column) in registers. Cin is walked
8 channels at a time: the 8 x 6 x 18 input window (the block and its one-pixel halo) and the
64 x 8 x 9 weights are staged in local memory, so every input element is read from global memory
once per 64 output channels and every weight once per 64 pixels. Accumulation in float with fma
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
#define BM 64   // output channels per tile
#define TH 4    // output rows per tile
#define TW 16   // output columns per tile
#define CK 8    // input channels per step
#define T 16

__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void conv3x3_tiled(__global const uchar *x, __global const uchar *w, __global const uchar *bias, __global uchar *y,
                   const int Cin, const int Cout, const int H, const int W, const int tiles_w, const int tiles_h,
                   const int dt) {
    __local float Xs[CK][TH + 2][TW + 2];
    __local float Ws[CK * 9][BM + 1];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int lid = ty * T + tx;
    const int tile = get_group_id(0);
    const int ow0 = (tile % tiles_w) * TW, oh0 = ((tile / tiles_w) % tiles_h) * TH;
    const int n = tile / (tiles_w * tiles_h);
    const int co0 = get_group_id(1) * BM;
    const size_t HW = (size_t)H * W;
    const size_t xbase = (size_t)n * Cin * HW;
    float acc[4][TH];
    for (int i = 0; i < 4; i++)
        for (int r = 0; r < TH; r++) acc[i][r] = 0.0f;
    for (int c0 = 0; c0 < Cin; c0 += CK) {
        for (int e = lid; e < CK * (TH + 2) * (TW + 2); e += T * T) {
            const int c = e / ((TH + 2) * (TW + 2)), rem = e % ((TH + 2) * (TW + 2));
            const int r = rem / (TW + 2), q = rem % (TW + 2);
            const int gc = c0 + c, gh = oh0 + r - 1, gw = ow0 + q - 1;
            Xs[c][r][q] = (gc < Cin && gh >= 0 && gh < H && gw >= 0 && gw < W)
                              ? load_elem(x, xbase + gc * HW + (size_t)gh * W + gw, dt) : 0.0f;
        }
        // weights [Cout, Cin, 3, 3]: the 72 taps of one output channel for this step are contiguous
        for (int e = lid; e < BM * CK * 9; e += T * T) {
            const int co = e / (CK * 9), k = e % (CK * 9);
            const int gco = co0 + co, gc = c0 + k / 9;
            Ws[k][co] = (gco < Cout && gc < Cin) ? load_elem(w, ((size_t)gco * Cin + gc) * 9 + k % 9, dt) : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int c = 0; c < CK; c++) {
            for (int kh = 0; kh < 3; kh++) {
                for (int kw = 0; kw < 3; kw++) {
                    float a[4], b[TH];
                    for (int i = 0; i < 4; i++) a[i] = Ws[c * 9 + kh * 3 + kw][ty + T * i];
                    for (int r = 0; r < TH; r++) b[r] = Xs[c][r + kh][tx + kw];
                    for (int i = 0; i < 4; i++)
                        for (int r = 0; r < TH; r++) acc[i][r] = fma(a[i], b[r], acc[i][r]);
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int ow = ow0 + tx;
    if (ow >= W) return;
    for (int i = 0; i < 4; i++) {
        const int co = co0 + ty + T * i;
        if (co >= Cout) continue;
        const float b = load_elem(bias, co, dt);
        for (int r = 0; r < TH; r++) {
            const int oh = oh0 + r;
            if (oh < H) store_elem(y, ((size_t)n * Cout + co) * HW + (size_t)oh * W + ow, acc[i][r] + b, dt);
        }
    }
}
"""

BM, TH, TW = 64, 4, 16
T = 16
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x, weight, bias):
    n, cin, h, w = x.shape
    cout = weight.shape[0]
    y = cla.empty(queue, (n, cout, h, w), x.dtype)
    if y.size:
        tiles_w, tiles_h = -(-w // TW), -(-h // TH)
        gsize = (tiles_w * tiles_h * n * T, -(-cout // BM) * T)
        prog.conv3x3_tiled(queue, gsize, (T, T), x.data, weight.data, bias.data, y.data, np.int32(cin), np.int32(cout),
                           np.int32(h), np.int32(w), np.int32(tiles_w), np.int32(tiles_h), np.int32(DTYPE_CODE[x.dtype]))
    return y
