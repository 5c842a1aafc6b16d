import numpy as np
import pyopencl.array as cla

# Read by `mkbench analyze portability` to explain a slow cell (never imported for it).
LIMITATION = ("OpenCL C reaches no tensor cores: float16 and bfloat16 products run on SIMT FMA, "
              "where cuBLAS uses mma")

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
#define BM 64
#define BN 64
#define BK 16
#define TX 16
#define TY 16

// C = A @ B, A [M, K], B [K, N], row-major. A 16x16 work-group computes a 64x64 tile of C, each
// work-item a 4x4 block (rows ty + 16 i, columns tx + 16 j) held in registers. K is walked in steps
// of 16: the A and B tiles are converted to float once, staged in local memory and read from there
// 64 times each. Edges load zeros and skip the stores. Accumulation in float (float32 means IEEE
// float32: no reduced-precision products).
__kernel __attribute__((reqd_work_group_size(TX, TY, 1)))
void matmul_tiled(__global const uchar *A, __global const uchar *B, __global uchar *Cm,
                  const int M, const int N, const int K, const int dt) {
    __local float As[BK][BM + 1];
    __local float Bs[BK][BN];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int lid = ty * TX + tx;
    const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;
    float acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = lid; e < BM * BK; e += TX * TY) {
            const int r = e / BK, kk = e % BK;  // 16 neighbouring work-items read 16 neighbouring k
            const int gm = m0 + r, gk = k0 + kk;
            As[kk][r] = (gm < M && gk < K) ? load_elem(A, (size_t)gm * K + gk, dt) : 0.0f;
        }
        for (int e = lid; e < BK * BN; e += TX * TY) {
            const int kk = e / BN, c = e % BN;
            const int gk = k0 + kk, gn = n0 + c;
            Bs[kk][c] = (gk < K && gn < N) ? load_elem(B, (size_t)gk * N + gn, dt) : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < BK; kk++) {
            float a[4], b[4];
            for (int i = 0; i < 4; i++) a[i] = As[kk][ty + TY * i];
            for (int j = 0; j < 4; j++) b[j] = Bs[kk][tx + TX * j];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < 4; i++) {
        const int gm = m0 + ty + TY * i;
        if (gm >= M) continue;
        for (int j = 0; j < 4; j++) {
            const int gn = n0 + tx + TX * j;
            if (gn < N) store_elem(Cm, (size_t)gm * N + gn, acc[i][j], dt);
        }
    }
}
"""

BM = BN = 64
TILE = 16
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, a, b):
    m, k = a.shape
    n = b.shape[1]
    c = cla.empty(queue, (m, n), a.dtype)
    if m and n:
        gsize = (-(-n // BN) * TILE, -(-m // BM) * TILE)
        prog.matmul_tiled(queue, gsize, (TILE, TILE), a.data, b.data, c.data,
                          np.int32(m), np.int32(n), np.int32(k), np.int32(DTYPE_CODE[a.dtype]))
    return c
