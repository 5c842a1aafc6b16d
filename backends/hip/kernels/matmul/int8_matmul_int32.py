"""int8 x int8 -> int32 matmul with exact integer accumulation. B [K, N] is first transposed into a
k-contiguous Bt [N, Kp] (K rounded up to 16, zero-padded) by a tiled shared-memory kernel. On
NVIDIA GPUs the product runs on the int8 tensor cores through inline PTX (mma.sync m16n8k32, 3-stage
cp.async ring, ldmatrix), as the CUDA reference does; on AMD it is an exact int32 SIMT tile
(128 x 128, 8 x 8 outputs per thread; an MFMA path is not written). Blocks are rastered in groups of
8 tile rows for L2 reuse."""

import numpy as np
import torch

from mkbench.backends.hip import load_module

HIP_SOURCE = r"""
#include <hip/hip_runtime.h>

// BM x BN outputs per block of 256 threads; blocks are rastered in groups of GROUP_M tile rows,
// walked column by column, so the blocks running together share B panels in L2.
#define BM 128
#define BN 128
#define GROUP_M 8

// Block -> (tile_m, tile_n) in GROUP_M-row groups.
__device__ __forceinline__ void raster(int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
    const int pid = blockIdx.x, per_group = GROUP_M * tiles_n;
    const int first = (pid / per_group) * GROUP_M, size = min(tiles_m - first, GROUP_M);
    tile_m = first + (pid % per_group) % size;
    tile_n = (pid % per_group) / size;
}

// Bt [N, Kp] = B^T, zero for k >= K (Kp: K rounded up to 16): the tensor-core B operand must be
// k-contiguous (ldmatrix cannot transpose bytes). 32 x 32 tiles through shared memory, reads
// coalesced along N, writes along K.
extern "C" __global__ void transpose_pad_i8(const signed char* __restrict__ B, signed char* __restrict__ Bt, int K, int N, int Kp) {
    __shared__ signed char tile[32][33];
    const int k0 = blockIdx.x * 32, n0 = blockIdx.y * 32;
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {
        const int k = k0 + r, n = n0 + threadIdx.x;
        tile[r][threadIdx.x] = k < K && n < N ? B[(long long)k * N + n] : 0;
    }
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {
        const int n = n0 + r, k = k0 + threadIdx.x;
        if (n < N && k < Kp) Bt[(long long)n * Kp + k] = tile[threadIdx.x][r];
    }
}

#if defined(__HIP_PLATFORM_NVIDIA__)
// NVIDIA (through hip_on_cuda.h): the int8 tensor cores, as the CUDA reference does.

// Tensor-core tiles: 8 warps, 2 along M x 4 along N, each 64 x 32; K walked BK bytes at a time
// through a STAGES-deep cp.async ring in shared memory (48 KiB, the static limit).
#define BK 64
#define STAGES 3
#define TILE_CHUNKS (BM * BK / 16)  // 16-byte chunks per operand tile (A and B alike)

// Both operands are k-contiguous, 4 chunks of 16 bytes per 64-byte row. ldmatrix reads one chunk
// column of 8 consecutive rows, so the chunk index is XOR-swizzled with the row: those 8 reads land
// in 8 distinct bank groups.
__device__ __forceinline__ int swz64(int row, int chunk) { return row * 4 + (chunk ^ ((row >> 1) & 3)); }

// --- sm_80+ building blocks (inline PTX: NVRTC needs no header) --------------------------------
__device__ __forceinline__ unsigned smem_u32(const void* p) {
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}
// 16 bytes global -> shared without a register round trip; src_bytes = 0 writes zeros (out of range).
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N)); }
// Four 8 x 8 b16 matrices from shared memory; lanes 8i .. 8i + 7 give the row addresses of matrix i.
__device__ __forceinline__ void ldsm_x4(unsigned addr, unsigned* r) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// D += A B on one m16n8k32 tile: int8 operands, exact int32 accumulators.
__device__ __forceinline__ void mma16832(int* d, const unsigned* a, const unsigned* b) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// rows x BK bytes of a k-contiguous int8 operand (row r at src + r * ld) into a swizzled tile:
// cp.async when every 16-byte chunk is in or out of range as a whole and aligned (VEC), byte loads
// otherwise (a ragged or unaligned A).
template <bool VEC>
__device__ __forceinline__ void load_kmajor(uint4* tile, const signed char* src, long long ld, int rows, int k0, int K) {
    #pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int q = threadIdx.x + i * 256, row = q >> 2, ch = q & 3, k = k0 + ch * 16;
        const signed char* g = src + (long long)row * ld + k;
        uint4* s = tile + swz64(row, ch);
        if (VEC) {
            cp_async16(smem_u32(s), row < rows && k < K ? g : src, row < rows && k < K);
        } else {
            unsigned w[4] = {0u, 0u, 0u, 0u};
            #pragma unroll
            for (int j = 0; j < 16; ++j)
                if (row < rows && k + j < K) w[j / 4] |= (unsigned)(unsigned char)g[j] << (8 * (j % 4));
            *s = make_uint4(w[0], w[1], w[2], w[3]);
        }
    }
}

// The BM x BN tile at (m0, n0) of A Bt^T into exact int32 accumulators, A [M, K] (lda) and
// Bt [N, Kp] (zero-padded to Kp, a multiple of 16) both k-contiguous. Each warp owns a 64 x 32
// sub-tile: 4 x 4 m16n8 accumulators, fed per k32 step by 4 ldmatrix.x4 for A and 2 for B.
template <bool A_VEC>
__device__ __forceinline__ void mma_tile(uint4* smem, const signed char* __restrict__ A, const signed char* __restrict__ Bt, long long lda,
                                         int M, int N, int K, int Kp, int m0, int n0, int (&acc)[4][4][4]) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, wm = warp >> 2, wn = warp & 3;
    const signed char* a_src = A + (long long)m0 * lda;
    const signed char* b_src = Bt + (long long)n0 * Kp;
    const int KT = (Kp + BK - 1) / BK;
    #pragma unroll
    for (int mt = 0; mt < 4; ++mt)
        #pragma unroll
        for (int nt = 0; nt < 4; ++nt)
            #pragma unroll
            for (int i = 0; i < 4; ++i) acc[mt][nt][i] = 0;
    auto load = [&](int stage, int kt) {
        uint4* tile = smem + stage * 2 * TILE_CHUNKS;
        load_kmajor<A_VEC>(tile, a_src, lda, M - m0, kt * BK, K);
        load_kmajor<true>(tile + TILE_CHUNKS, b_src, Kp, N - n0, kt * BK, Kp);
    };
    #pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) load(s, s);
        cp_async_commit();
    }
    for (int kt = 0; kt < KT; ++kt) {
        cp_async_wait<STAGES - 2>();  // tile kt has landed (this thread's copies) ...
        __syncthreads();              // ... for every thread, and tile kt - 1 is no longer read
        if (kt + STAGES - 1 < KT) load((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
        cp_async_commit();
        const uint4* As = smem + (kt % STAGES) * 2 * TILE_CHUNKS;
        const uint4* Bs = As + TILE_CHUNKS;
        #pragma unroll
        for (int ks = 0; ks < BK / 32; ++ks) {
            unsigned a[4][4], b[4][2];
            #pragma unroll
            for (int mt = 0; mt < 4; ++mt) ldsm_x4(smem_u32(As + swz64(wm * 64 + mt * 16 + (lane & 15), ks * 2 + (lane >> 4))), a[mt]);
            #pragma unroll
            for (int p = 0; p < 2; ++p) {  // n8 tiles 2p and 2p + 1
                unsigned r[4];
                ldsm_x4(smem_u32(Bs + swz64(wn * 32 + p * 16 + (lane & 7) + (lane >> 4) * 8, ks * 2 + ((lane >> 3) & 1))), r);
                b[2 * p][0] = r[0]; b[2 * p][1] = r[1]; b[2 * p + 1][0] = r[2]; b[2 * p + 1][1] = r[3];
            }
            #pragma unroll
            for (int mt = 0; mt < 4; ++mt)
                #pragma unroll
                for (int nt = 0; nt < 4; ++nt) mma16832(acc[mt][nt], a[mt], b[nt]);
        }
    }
    cp_async_wait<0>();
}

// acc -> C int32 [M, N]: a thread holds rows lane / 4 and + 8 of each m16 tile, column pairs
// 2 (lane % 4) of each n8 tile, stored as one 8-byte int2 where both exist and N is even.
__device__ __forceinline__ void store_pair_i32(int* C, int M, int N, int r, int c, int v0, int v1) {
    if (r >= M) return;
    int* p = C + (long long)r * N + c;
    if (c + 1 < N && (N & 1) == 0) {
        *reinterpret_cast<int2*>(p) = make_int2(v0, v1);
    } else {
        if (c < N) p[0] = v0;
        if (c + 1 < N) p[1] = v1;
    }
}

__device__ __forceinline__ void int8_matmul_mma(const signed char* A, const signed char* Bt, int* C, int M, int N, int K, int Kp) {
    __shared__ __align__(128) uint4 smem[STAGES * 2 * TILE_CHUNKS];
    int tile_m, tile_n;
    raster((M + BM - 1) / BM, (N + BN - 1) / BN, tile_m, tile_n);
    const int m0 = tile_m * BM, n0 = tile_n * BN, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int acc[4][4][4];
    if (K % 16 == 0 && ((unsigned long long)A & 15) == 0) mma_tile<true>(smem, A, Bt, K, M, N, K, Kp, m0, n0, acc);
    else mma_tile<false>(smem, A, Bt, K, M, N, K, Kp, m0, n0, acc);
    #pragma unroll
    for (int mt = 0; mt < 4; ++mt)
        #pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
            const int r = m0 + (warp >> 2) * 64 + mt * 16 + (lane >> 2), c = n0 + (warp & 3) * 32 + nt * 8 + (lane & 3) * 2;
            store_pair_i32(C, M, N, r, c, acc[mt][nt][0], acc[mt][nt][1]);
            store_pair_i32(C, M, N, r + 8, c, acc[mt][nt][2], acc[mt][nt][3]);
        }
}
#define TC_BOUNDS __launch_bounds__(256, 2)  // the tensor-core tile fits 128 registers: two blocks per SM
#else

// AMD: exact int32 SIMT. The BM x BN tile at (m0, n0) of A Bt^T, both operand tiles staged in
// shared memory as int32 (k-major), each of the 256 threads accumulating an 8 x 8 register block
// (two 4-row by two 4-column sub-blocks 64 apart).
#define SIMT_BK 16
__device__ __forceinline__ void int8_matmul_simt(const signed char* A, const signed char* Bt, int* C, int M, int N, int K, int Kp) {
    __shared__ int As[SIMT_BK][BM + 4];
    __shared__ int Bs[SIMT_BK][BN + 4];
    int tile_m, tile_n;
    raster((M + BM - 1) / BM, (N + BN - 1) / BN, tile_m, tile_n);
    const int m0 = tile_m * BM, n0 = tile_n * BN, tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    int acc[8][8];
    #pragma unroll
    for (int i = 0; i < 8; ++i)
        #pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0;
    for (int k0 = 0; k0 < K; k0 += SIMT_BK) {
        #pragma unroll
        for (int r = 0; r < 8; ++r) {
            const int row = ty + 16 * r, gk = k0 + tx;
            As[tx][row] = m0 + row < M && gk < K ? A[(long long)(m0 + row) * K + gk] : 0;
            Bs[tx][row] = n0 + row < N && gk < K ? Bt[(long long)(n0 + row) * Kp + gk] : 0;
        }
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < SIMT_BK; ++k) {
            int a[8], b[8];
            #pragma unroll
            for (int i = 0; i < 4; ++i) { a[i] = As[k][ty * 4 + i]; a[i + 4] = As[k][64 + ty * 4 + i]; }
            #pragma unroll
            for (int j = 0; j < 4; ++j) { b[j] = Bs[k][tx * 4 + j]; b[j + 4] = Bs[k][64 + tx * 4 + j]; }
            #pragma unroll
            for (int i = 0; i < 8; ++i)
                #pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + (i < 4 ? 0 : 64) + ty * 4 + (i & 3);
        if (row >= M) continue;
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int col = n0 + (j < 4 ? 0 : 64) + tx * 4 + (j & 3);
            if (col < N) C[(long long)row * N + col] = acc[i][j];
        }
    }
}
#define TC_BOUNDS __launch_bounds__(256)
#endif

extern "C" __global__ void TC_BOUNDS int8_matmul_i32(const signed char* A, const signed char* Bt, int* C, int M, int N, int K, int Kp) {
#if defined(__HIP_PLATFORM_NVIDIA__)
    int8_matmul_mma(A, Bt, C, M, N, K, Kp);
#else
    int8_matmul_simt(A, Bt, C, M, N, K, Kp);
#endif
}
"""

_module = load_module(HIP_SOURCE)

BM = BN = 128
THREADS = 256
_transpose = _module.get_function("transpose_pad_i8")
_matmul = _module.get_function("int8_matmul_i32")


def kernel_function(a, b):
    a, b = a.contiguous(), b.contiguous()
    M, K = a.shape
    K2, N = b.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: {K} and {K2}")
    c = torch.empty((M, N), dtype=torch.int32, device=a.device)
    if M and N:
        Kp = (K + 15) // 16 * 16
        bt = torch.empty((N, Kp), dtype=torch.int8, device=b.device)
        if Kp:
            _transpose(((Kp + 31) // 32, (N + 31) // 32), (32, 8), (b, bt, np.int32(K), np.int32(N), np.int32(Kp)))
        tiles = ((M + BM - 1) // BM) * ((N + BN - 1) // BN)
        _matmul((tiles,), (THREADS,), (a, bt, c, np.int32(M), np.int32(N), np.int32(K), np.int32(Kp)))
    return c
