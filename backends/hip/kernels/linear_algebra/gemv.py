"""BLAS gemv y_out = alpha A x + beta y, float32 accumulation for every dtype (float32 means IEEE
float32). Bandwidth-bound on A: one block per row streams it with 16-byte loads (4 float32 or 8
bfloat16 per load, x alongside, x staying in L2 for every row) where the row length and both
pointers allow, element loads otherwise; a shuffle reduction within warps and across them; thread 0
applies alpha and beta."""

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

// Wavefront-size-agnostic: warpSize is 64 on AMD CDNA, 32 on RDNA and NVIDIA.
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_xor(v, o);
    return v;
}
// Block-wide reductions; every thread gets the result. blockDim.x: a multiple of 64, at most
// 1024; part[] has a slot per wavefront of the narrowest width (32).
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float part[32];
    v = warp_sum(v);
    const int lane = threadIdx.x % warpSize, wave = threadIdx.x / warpSize;
    if (lane == 0) part[wave] = v;
    __syncthreads();
    v = warp_sum(lane < (int)(blockDim.x / warpSize) ? part[lane] : 0.0f);
    __syncthreads();  // part[] is reused by the next call
    return v;
}

// 16-byte words unpacked to float32: 4 float32, or 8 bfloat16 (element 2k in the low half of word k).
__device__ __forceinline__ float dot16(uint4 a, uint4 b, float acc, float) {
    acc = fmaf(__uint_as_float(a.x), __uint_as_float(b.x), acc);
    acc = fmaf(__uint_as_float(a.y), __uint_as_float(b.y), acc);
    acc = fmaf(__uint_as_float(a.z), __uint_as_float(b.z), acc);
    return fmaf(__uint_as_float(a.w), __uint_as_float(b.w), acc);
}
__device__ __forceinline__ float dot_bf16x2(unsigned a, unsigned b, float acc) {
    acc = fmaf(__uint_as_float(a << 16), __uint_as_float(b << 16), acc);
    return fmaf(__uint_as_float(a & 0xffff0000u), __uint_as_float(b & 0xffff0000u), acc);
}
__device__ __forceinline__ float dot16(uint4 a, uint4 b, float acc, bf16) {
    acc = dot_bf16x2(a.x, b.x, acc);
    acc = dot_bf16x2(a.y, b.y, acc);
    acc = dot_bf16x2(a.z, b.z, acc);
    return dot_bf16x2(a.w, b.w, acc);
}

template <typename T>
__device__ __forceinline__ void gemv_rows(const T* __restrict__ A, const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out,
                                          long long M, long long N, float alpha, float beta) {
    constexpr int PER_WORD = 16 / sizeof(T);
    const bool words = N % PER_WORD == 0 && (((unsigned long long)A | (unsigned long long)x) & 15) == 0;
    for (long long row = blockIdx.x; row < M; row += gridDim.x) {
        const T* ar = A + row * N;
        float acc = 0.0f;
        if (words) {
            const uint4* aw = reinterpret_cast<const uint4*>(ar);
            const uint4* xw = reinterpret_cast<const uint4*>(x);
            for (long long j = threadIdx.x; j < N / PER_WORD; j += blockDim.x) acc = dot16(aw[j], xw[j], acc, T());
        } else {
            for (long long j = threadIdx.x; j < N; j += blockDim.x) acc = fmaf(to_f32(ar[j]), to_f32(x[j]), acc);
        }
        acc = block_sum(acc);
        if (threadIdx.x == 0) out[row] = from_f32<T>(fmaf(alpha, acc, beta * to_f32(y[row])));
    }
}

extern "C" __global__ void gemv_f32(const float* A, const float* x, const float* y, float* out, long long M, long long N, float alpha,
                                    float beta) {
    gemv_rows(A, x, y, out, M, N, alpha, beta);
}
extern "C" __global__ void gemv_bf16(const bf16* A, const bf16* x, const bf16* y, bf16* out, long long M, long long N, float alpha,
                                     float beta) {
    gemv_rows(A, x, y, out, M, N, alpha, beta);
}
"""

_module = load_module(HIP_SOURCE)

MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("gemv_f32"), torch.bfloat16: _module.get_function("gemv_bf16")}


def _threads(cols):
    return 256 if cols >= 2048 else 64



def kernel_function(a, x, y, alpha, beta):
    a, x, y = a.contiguous(), x.contiguous(), y.contiguous()
    M, N = a.shape
    out = torch.empty((M,), dtype=a.dtype, device=a.device)
    if M:
        _kernels[a.dtype]((min(M, MAX_GRID),), (_threads(N),), (a, x, y, out, np.int64(M),
                                                                np.int64(N), np.float32(alpha), np.float32(beta)))
    return out
