"""SwiGLU gate y = silu(x W1^T) * (x W3^T), both GEMMs in one kernel sharing each x tile, with the
SiLU-product epilogue in registers: a block computes 128 x 64 outputs, its B tile stacking 64 rows
of W1 over the same 64 rows of W3. On NVIDIA GPUs bfloat16 runs on the tensor cores through inline
PTX (mma.sync m16n8k16, float32 accumulators, 3-stage cp.async ring, ldmatrix), as the CUDA
reference does. float32 means IEEE float32 (no TF32) and stays on SIMT FMA, as does bfloat16 on
AMD (an MFMA path is not written). Blocks are rastered in groups of 8 tile rows for L2 reuse."""

import numpy as np
import torch

from mkbench.backends.hip import load_module

HIP_SOURCE = r"""
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

// bfloat16 travels as raw bits with explicit round-to-nearest-even (the same code on every HIP
// version, hipcc or hiprtc, and on the HIP-on-CUDA mapping); float16 is HIP's __half.
struct bf16 { unsigned short bits; };
typedef __half f16;
__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(bf16 v) { return __uint_as_float(((unsigned)v.bits) << 16); }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half(v); }
template <> __device__ __forceinline__ bf16 from_f32<bf16>(float v) {
    unsigned u = __float_as_uint(v);
    bf16 r;
    r.bits = (u & 0x7fffffffu) > 0x7f800000u ? (unsigned short)((u >> 16) | 0x40u)                 // NaN stays NaN
                                             : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // nearest even
    return r;
}

// BM x BN_OUT outputs per block of 256 threads: the B tile holds BN_OUT rows of W1 (gate) and the
// same BN_OUT rows of W3 (up), so both products of an output are in the same thread. Blocks are
// rastered in groups of GROUP_M tile rows, walked column by column, so the blocks running together
// share weight panels in L2.
#define BM 128
#define BN 128
#define BN_OUT 64
#define GROUP_M 8

// Block -> (tile_m, tile_n) in GROUP_M-row groups.
__device__ __forceinline__ void raster(int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
    const int pid = blockIdx.x, per_group = GROUP_M * tiles_n;
    const int first = (pid / per_group) * GROUP_M, size = min(tiles_m - first, GROUP_M);
    tile_m = first + (pid % per_group) % size;
    tile_n = (pid % per_group) / size;
}

__device__ __forceinline__ float silu(float v) { return v / (1.0f + expf(-v)); }

// float32 (IEEE: no TF32), and bfloat16 on AMD, run on SIMT FMA.
#define SIMT_BK 16

// float32: the SIMT tile over A = x and B^T = [W1 rows n0 .. n0 + 63; W3 rows n0 .. n0 + 63]: a
// thread's columns j < 4 are gate outputs and j + 4 (64 further) the up outputs of the same columns.
template <typename T>
__device__ __forceinline__ void swiglu_simt(const T* __restrict__ X, const T* __restrict__ W1, const T* __restrict__ W3, T* __restrict__ Y,
                                            int M, int N, int K) {
    __shared__ float As[SIMT_BK][BM + 4];
    __shared__ float Bs[SIMT_BK][BN + 4];
    int tile_m, tile_n;
    raster((M + BM - 1) / BM, (N + BN_OUT - 1) / BN_OUT, tile_m, tile_n);
    const int m0 = tile_m * BM, n0 = tile_n * BN_OUT, tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    float acc[8][8];
    #pragma unroll
    for (int i = 0; i < 8; ++i)
        #pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += SIMT_BK) {
        #pragma unroll
        for (int r = 0; r < 8; ++r) {  // 16 consecutive k per row, 16 rows per pass, 8 passes (A and both weights)
            const int row = ty + 16 * r, gk = k0 + tx, gn = n0 + (row & 63);
            As[tx][row] = m0 + row < M && gk < K ? to_f32(X[(long long)(m0 + row) * K + gk]) : 0.0f;
            Bs[tx][row] = gn < N && gk < K ? to_f32((row < 64 ? W1 : W3)[(long long)gn * K + gk]) : 0.0f;
        }
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < SIMT_BK; ++k) {
            float a[8], b[8];
            #pragma unroll
            for (int i = 0; i < 4; ++i) { a[i] = As[k][ty * 4 + i]; a[i + 4] = As[k][64 + ty * 4 + i]; }
            #pragma unroll
            for (int j = 0; j < 4; ++j) { b[j] = Bs[k][tx * 4 + j]; b[j + 4] = Bs[k][64 + tx * 4 + j]; }
            #pragma unroll
            for (int i = 0; i < 8; ++i)
                #pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + (i < 4 ? 0 : 64) + ty * 4 + (i & 3);
        if (row >= M) continue;
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int col = n0 + tx * 4 + j;
            if (col < N) Y[(long long)row * N + col] = from_f32<T>(silu(acc[i][j]) * acc[i][j + 4]);
        }
    }
}

#if defined(__HIP_PLATFORM_NVIDIA__)
// NVIDIA (through hip_on_cuda.h): bfloat16 on the tensor cores, as the CUDA reference does.

// Tensor-core tiles: 8 warps, 2 along M x 4 along N; K walked BK at a time through a STAGES-deep
// cp.async ring in shared memory (48 KiB, the static limit). Warp (wm, wn) owns rows wm * 64 .. + 63
// and output columns wn * 16 .. + 15: n8 tiles 0, 1 of the gate rows, 2, 3 of the up rows.
#define BK 32
#define STAGES 3
#define TILE_CHUNKS (BM * BK * 2 / 16)  // 16-byte chunks per operand tile

// Both tiles are k-contiguous, 4 chunks of 16 bytes per 64-byte row. ldmatrix reads one chunk
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

// D += A B on one m16n8k16 tile, bfloat16 operands, float32 accumulators.
__device__ __forceinline__ void mma16816(float* d, const unsigned* a, const unsigned* b, bf16) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// 128 rows x BK elements of k-contiguous rows into a swizzled tile; row r comes from row_ptr(r)
// (null: out of range, zeros). cp.async when K is a multiple of 8 and rows are aligned (VEC), element
// loads otherwise.
template <bool VEC, typename T, typename RowPtr>
__device__ __forceinline__ void load_rows(uint4* tile, RowPtr row_ptr, int k0, int K) {
    #pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int q = threadIdx.x + i * 256, row = q >> 2, ch = q & 3, k = k0 + ch * 8;
        const T* base = row_ptr(row);
        uint4* s = tile + swz64(row, ch);
        if (VEC) {
            cp_async16(smem_u32(s), base && k < K ? base + k : row_ptr(0), base && k < K);
        } else {
            unsigned short e[8];
            #pragma unroll
            for (int j = 0; j < 8; ++j) e[j] = base && k + j < K ? base[k + j].bits : 0;
            *s = make_uint4(e[0] | (unsigned)e[1] << 16, e[2] | (unsigned)e[3] << 16, e[4] | (unsigned)e[5] << 16, e[6] | (unsigned)e[7] << 16);
        }
    }
}

template <bool VEC, typename T>
__device__ __forceinline__ void swiglu_tile(uint4* smem, const T* __restrict__ X, const T* __restrict__ W1, const T* __restrict__ W3,
                                            int M, int N, int K, int m0, int n0, float (&acc)[4][4][4]) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, wm = warp >> 2, wn = warp & 3;
    const int KT = (K + BK - 1) / BK;
    #pragma unroll
    for (int mt = 0; mt < 4; ++mt)
        #pragma unroll
        for (int nt = 0; nt < 4; ++nt)
            #pragma unroll
            for (int i = 0; i < 4; ++i) acc[mt][nt][i] = 0.0f;
    auto x_row = [&](int r) -> const T* { return m0 + r < M ? X + (long long)(m0 + r) * K : nullptr; };
    auto w_row = [&](int r) -> const T* {  // rows 0 .. 63: W1 (gate), 64 .. 127: W3 (up), same outputs
        const int n = n0 + (r & 63);
        return n < N ? (r < 64 ? W1 : W3) + (long long)n * K : nullptr;
    };
    auto load = [&](int stage, int kt) {
        uint4* tile = smem + stage * 2 * TILE_CHUNKS;
        load_rows<VEC, T>(tile, x_row, kt * BK, K);
        load_rows<VEC, T>(tile + TILE_CHUNKS, w_row, kt * BK, K);
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
        for (int ks = 0; ks < BK / 16; ++ks) {
            unsigned a[4][4], b[4][2];
            #pragma unroll
            for (int mt = 0; mt < 4; ++mt) ldsm_x4(smem_u32(As + swz64(wm * 64 + mt * 16 + (lane & 15), ks * 2 + (lane >> 4))), a[mt]);
            #pragma unroll
            for (int p = 0; p < 2; ++p) {  // p = 0: gate n8 tiles 0, 1; p = 1: up n8 tiles 2, 3 (same columns)
                unsigned r[4];
                ldsm_x4(smem_u32(Bs + swz64(p * 64 + wn * 16 + (lane & 7) + (lane >> 4) * 8, ks * 2 + ((lane >> 3) & 1))), r);
                b[2 * p][0] = r[0]; b[2 * p][1] = r[1]; b[2 * p + 1][0] = r[2]; b[2 * p + 1][1] = r[3];
            }
            #pragma unroll
            for (int mt = 0; mt < 4; ++mt)
                #pragma unroll
                for (int nt = 0; nt < 4; ++nt) mma16816(acc[mt][nt], a[mt], b[nt], T());
        }
    }
    cp_async_wait<0>();
}

template <typename T>
__device__ __forceinline__ void swiglu_mma(const T* X, const T* W1, const T* W3, T* Y, int M, int N, int K) {
    __shared__ __align__(128) uint4 smem[STAGES * 2 * TILE_CHUNKS];
    int tile_m, tile_n;
    raster((M + BM - 1) / BM, (N + BN_OUT - 1) / BN_OUT, tile_m, tile_n);
    const int m0 = tile_m * BM, n0 = tile_n * BN_OUT, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    float acc[4][4][4];
    if (K % 8 == 0 && ((((unsigned long long)X | (unsigned long long)W1 | (unsigned long long)W3) & 15) == 0)) swiglu_tile<true>(smem, X, W1, W3, M, N, K, m0, n0, acc);
    else swiglu_tile<false>(smem, X, W1, W3, M, N, K, m0, n0, acc);
    // Epilogue: silu(gate) * up, gate in n8 tiles 0, 1 and up in 2, 3 of the same output columns.
    #pragma unroll
    for (int mt = 0; mt < 4; ++mt)
        #pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int r = m0 + (warp >> 2) * 64 + mt * 16 + (lane >> 2), c = n0 + (warp & 3) * 16 + j * 8 + (lane & 3) * 2;
            const float* gate = acc[mt][j];
            const float* up = acc[mt][j + 2];
            store_pair(Y, N, M, N, r, c, silu(gate[0]) * up[0], silu(gate[1]) * up[1]);
            store_pair(Y, N, M, N, r + 8, c, silu(gate[2]) * up[2], silu(gate[3]) * up[3]);
        }
}

// Two adjacent outputs (row r, columns c and c + 1) with one 4-byte store where both exist and
// the pair is aligned (c is even; an even ldc keeps every row's pairs aligned).
template <typename T>
__device__ __forceinline__ void store_pair(T* C, long long ldc, int M, int N, int r, int c, float v0, float v1) {
    struct alignas(2 * sizeof(T)) Pair { T a, b; };
    if (r >= M) return;
    T* p = C + (long long)r * ldc + c;
    if (c + 1 < N && (ldc & 1) == 0) {
        *reinterpret_cast<Pair*>(p) = Pair{from_f32<T>(v0), from_f32<T>(v1)};
    } else {
        if (c < N) p[0] = from_f32<T>(v0);
        if (c + 1 < N) p[1] = from_f32<T>(v1);
    }
}

#define SWIGLU_BF16 swiglu_mma
#define TC_BOUNDS __launch_bounds__(256, 2)  // the tensor-core tile fits 128 registers: two blocks per SM
#else
// AMD: the SIMT tile (an MFMA path would need rocWMMA or the gfx-specific builtins).
#define SWIGLU_BF16 swiglu_simt
#define TC_BOUNDS __launch_bounds__(256)
#endif

extern "C" __global__ void __launch_bounds__(256) swiglu_f32(const float* X, const float* W1, const float* W3, float* Y, int M, int N, int K) {
    swiglu_simt(X, W1, W3, Y, M, N, K);
}

extern "C" __global__ void TC_BOUNDS swiglu_bf16(const bf16* X, const bf16* W1, const bf16* W3, bf16* Y, int M, int N, int K) {
    SWIGLU_BF16(X, W1, W3, Y, M, N, K);
}
"""

_module = load_module(HIP_SOURCE)

BM, BN_OUT = 128, 64
THREADS = 256
_kernels = {torch.float32: _module.get_function("swiglu_f32"), torch.bfloat16: _module.get_function("swiglu_bf16")}


def kernel_function(x, w_gate, w_up):
    x, w_gate, w_up = x.contiguous(), w_gate.contiguous(), w_up.contiguous()
    M, K = x.shape
    N = w_gate.shape[0]
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    if M and N:
        tiles = ((M + BM - 1) // BM) * ((N + BN_OUT - 1) // BN_OUT)
        _kernels[x.dtype]((tiles,), (THREADS,), (x, w_gate, w_up, y, np.int32(M),
                                                 np.int32(N), np.int32(K)))
    return y
