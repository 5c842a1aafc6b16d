"""Dense C = A @ B, float32 accumulation for every dtype (float32 means IEEE float32: no TF32).
A 128 x 128 output tile per block of 256 threads, K walked 16 at a time: both operand tiles are
staged in shared memory as float32 (A stored k-major), and each thread accumulates an 8 x 8
register block (two 4-row by two 4-column sub-blocks 64 apart, so a warp's shared-memory reads
are broadcasts or 2-way at worst). SIMT FMA throughout: tensor cores are not used."""

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

#define BM 128
#define BN 128
#define BK 16

template <typename T>
__device__ __forceinline__ void matmul_tile(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ Cm,
                                            int M, int N, int K) {
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];
    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    float acc[8][8];
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        #pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
    }
    for (int k0 = 0; k0 < K; k0 += BK) {
        // A tile (BM rows x BK): 16 consecutive k per row, 16 rows per pass, 8 passes.
        #pragma unroll
        for (int r = 0; r < 8; ++r) {
            const int m = ty + 16 * r, gm = m0 + m, gk = k0 + tx;
            As[tx][m] = (gm < M && gk < K) ? to_f32(A[(long long)gm * K + gk]) : 0.0f;
        }
        // B tile (BK x BN): 128 consecutive columns per row, 2 rows per pass, 8 passes.
        #pragma unroll
        for (int r = 0; r < 8; ++r) {
            const int k = tid / BN + 2 * r, n = tid % BN, gk = k0 + k, gn = n0 + n;
            Bs[k][n] = (gk < K && gn < N) ? to_f32(B[(long long)gk * N + gn]) : 0.0f;
        }
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[8], bb[8];
            #pragma unroll
            for (int i = 0; i < 4; ++i) { a[i] = As[k][ty * 4 + i]; a[i + 4] = As[k][64 + ty * 4 + i]; }
            #pragma unroll
            for (int j = 0; j < 4; ++j) { bb[j] = Bs[k][tx * 4 + j]; bb[j + 4] = Bs[k][64 + tx * 4 + j]; }
            #pragma unroll
            for (int i = 0; i < 8; ++i) {
                #pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], bb[j], acc[i][j]);
            }
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
        if (row >= M) continue;
        #pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int col = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
            if (col < N) Cm[(long long)row * N + col] = from_f32<T>(acc[i][j]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(256) matmul_f32(const float* A, const float* B, float* C, int M, int N, int K) {
    matmul_tile(A, B, C, M, N, K);
}
extern "C" __global__ void __launch_bounds__(256) matmul_f16(const f16* A, const f16* B, f16* C, int M, int N, int K) {
    matmul_tile(A, B, C, M, N, K);
}
extern "C" __global__ void __launch_bounds__(256) matmul_bf16(const bf16* A, const bf16* B, bf16* C, int M, int N, int K) {
    matmul_tile(A, B, C, M, N, K);
}
"""

_module = load_module(HIP_SOURCE)

BM = BN = 128
THREADS = 256
_kernels = {torch.float32: _module.get_function("matmul_f32"), torch.float16: _module.get_function("matmul_f16"),
            torch.bfloat16: _module.get_function("matmul_bf16")}


def kernel_function(a, b):
    a, b = a.contiguous(), b.contiguous()
    M, K = a.shape
    K2, N = b.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: {K} and {K2}")
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if M and N:
        grid = ((N + BN - 1) // BN, (M + BM - 1) // BM)
        _kernels[a.dtype](grid, (THREADS,), (a, b, c, np.int32(M), np.int32(N), np.int32(K)))
    return c
