"""int8 x int8 -> int32 matrix product, exact: C[m, n] = sum_k int(A[m, k]) * int(B[k, n]) in
32-bit integer arithmetic (no float anywhere, so partial sums past 2^24 stay exact). One 16x16
work-group per 128x128 tile of C, each work-item an 8x8 block of int accumulators (rows ty + 16 i,
columns tx + 16 j); K is walked 32 at a time with the int8 tiles widened to int once and staged in
local memory (A transposed, padded by 4 ints against bank conflicts on the transposing stores)."""

import numpy as np
import pyopencl.array as cla

OPENCL_SOURCE = r"""
#define BM 128
#define BN 128
#define BK 32
#define T 16
#define R 8     // rows and columns of C per work-item

__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void int8_matmul_tiled(__global const char *A, __global const char *B, __global int *Cm,
                       const int M, const int N, const int K) {
    __local int As[BK][BM + 4];
    __local int Bs[BK][BN];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int lid = ty * T + tx;
    const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;
    int acc[R][R];
    for (int i = 0; i < R; i++)
        for (int j = 0; j < R; j++) acc[i][j] = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = lid; e < BM * BK; e += T * T) {
            const int r = e / BK, kk = e % BK;  // 32 neighbouring work-items read 32 neighbouring k
            const int gm = m0 + r, gk = k0 + kk;
            As[kk][r] = (gm < M && gk < K) ? (int)A[(size_t)gm * K + gk] : 0;
        }
        for (int e = lid; e < BK * BN; e += T * T) {
            const int kk = e / BN, c = e % BN;
            const int gk = k0 + kk, gn = n0 + c;
            Bs[kk][c] = (gk < K && gn < N) ? (int)B[(size_t)gk * N + gn] : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < BK; kk++) {
            int a[R], b[R];
            for (int i = 0; i < R; i++) a[i] = As[kk][ty + T * i];
            for (int j = 0; j < R; j++) b[j] = Bs[kk][tx + T * j];
            for (int i = 0; i < R; i++)
                for (int j = 0; j < R; j++) acc[i][j] += a[i] * b[j];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < R; i++) {
        const int gm = m0 + ty + T * i;
        if (gm >= M) continue;
        for (int j = 0; j < R; j++) {
            const int gn = n0 + tx + T * j;
            if (gn < N) Cm[(size_t)gm * N + gn] = acc[i][j];
        }
    }
}
"""

BM = BN = 128
T = 16


def kernel_function(prog, queue, a, b):
    m, k = a.shape
    n = b.shape[1]
    c = cla.empty(queue, (m, n), np.int32)
    if c.size:
        gsize = (-(-n // BN) * T, -(-m // BM) * T)
        prog.int8_matmul_tiled(queue, gsize, (T, T), a.data, b.data, c.data, np.int32(m), np.int32(n), np.int32(k))
    return c
