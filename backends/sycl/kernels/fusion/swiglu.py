"""SwiGLU gate, y = silu(x @ W1^T) * (x @ W3^T), x [M, K], W1 and W3 [N, K]: both GEMMs in one
kernel, sharing the staged tile of x, with the SiLU-product as the epilogue, so the two [M, N]
projections never reach memory. One 16x16 work-group per 128 (M) x 64 (N) tile; each work-item
keeps an 8x4 block of each projection in registers. K is walked 16 at a time with the x, W1 and
W3 tiles staged transposed in local memory ([k][row], padded against bank conflicts).
Accumulation in float (float32 means IEEE float32); silu(g) = g / (1 + exp(-g))."""

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
#define BM 128
#define BN 64
#define BK 16
#define T 16
#define RM 8   // rows per work-item
#define RN 4   // columns per work-item

__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void swiglu_tiled(__global const uchar *X, __global const uchar *W1, __global const uchar *W3, __global uchar *Y,
                  const int M, const int N, const int K, const int dt) {
    __local float Xs[BK][BM + 4];
    __local float G[BK][BN + 4];
    __local float U[BK][BN + 4];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int lid = ty * T + tx;
    const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;
    float gate[RM][RN], up[RM][RN];
    for (int i = 0; i < RM; i++)
        for (int j = 0; j < RN; j++) gate[i][j] = up[i][j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = lid; e < BM * BK; e += T * T) {
            const int r = e / BK, kk = e % BK;
            const int gm = m0 + r, gk = k0 + kk;
            Xs[kk][r] = (gm < M && gk < K) ? load_elem(X, (size_t)gm * K + gk, dt) : 0.0f;
        }
        for (int e = lid; e < BN * BK; e += T * T) {
            const int c = e / BK, kk = e % BK;
            const int gn = n0 + c, gk = k0 + kk;
            const int ok = gn < N && gk < K;
            G[kk][c] = ok ? load_elem(W1, (size_t)gn * K + gk, dt) : 0.0f;
            U[kk][c] = ok ? load_elem(W3, (size_t)gn * K + gk, dt) : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < BK; kk++) {
            float a[RM], g[RN], u[RN];
            for (int i = 0; i < RM; i++) a[i] = Xs[kk][ty + T * i];
            for (int j = 0; j < RN; j++) { g[j] = G[kk][tx + T * j]; u[j] = U[kk][tx + T * j]; }
            for (int i = 0; i < RM; i++)
                for (int j = 0; j < RN; j++) {
                    gate[i][j] = fma(a[i], g[j], gate[i][j]);
                    up[i][j] = fma(a[i], u[j], up[i][j]);
                }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < RM; i++) {
        const int gm = m0 + ty + T * i;
        if (gm >= M) continue;
        for (int j = 0; j < RN; j++) {
            const int gn = n0 + tx + T * j;
            if (gn >= N) continue;
            const float g = gate[i][j];
            store_elem(Y, (size_t)gm * N + gn, g / (1.0f + exp(-g)) * up[i][j], dt);
        }
    }
}
"""

BM, BN = 128, 64
T = 16
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, x, w_gate, w_up):
    m, k = x.shape
    n = w_gate.shape[0]
    y = cla.empty(queue, (m, n), x.dtype)
    if y.size:
        gsize = (-(-n // BN) * T, -(-m // BM) * T)
        prog.swiglu_tiled(queue, gsize, (T, T), x.data, w_gate.data, w_up.data, y.data, np.int32(m), np.int32(n),
                          np.int32(k), np.int32(DTYPE_CODE[x.dtype]))
    return y
