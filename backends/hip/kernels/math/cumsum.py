"""Row-wise inclusive prefix sum (torch.cumsum(x, dim=-1)) in float32. One block per row walks
it in chunks of THREADS * ITEMS: a coalesced load into shared memory (padded so the per-thread
reads below hit distinct banks), a sequential scan of ITEMS consecutive values per thread, a
block-wide exclusive scan of the thread totals (warp shuffles, then the warp totals), and the
chunk's running total carried into the next chunk."""

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

// Wavefront-size-agnostic (64 lanes on AMD CDNA, 32 on NVIDIA).
__device__ __forceinline__ float warp_inclusive_scan(float v) {
    const int lane = threadIdx.x % warpSize;
    for (int o = 1; o < warpSize; o <<= 1) {
        const float t = __shfl_up(v, o);
        if (lane >= o) v += t;
    }
    return v;
}
// Exclusive prefix sum of one value per thread across the block (blockDim.x a multiple of 64).
__device__ __forceinline__ float block_exclusive_scan(float v) {
    __shared__ float totals[32];  // a slot per wavefront of the narrowest width
    const int lane = threadIdx.x % warpSize, wave = threadIdx.x / warpSize, waves = blockDim.x / warpSize;
    const float inc = warp_inclusive_scan(v);
    float exc = __shfl_up(inc, 1);
    if (lane == 0) exc = 0.0f;
    if (lane == warpSize - 1) totals[wave] = inc;
    __syncthreads();
    if (wave == 0) {
        const float t = warp_inclusive_scan(lane < waves ? totals[lane] : 0.0f);
        if (lane < waves) totals[lane] = t;
    }
    __syncthreads();
    const float before = wave > 0 ? totals[wave - 1] : 0.0f;
    __syncthreads();  // totals[] is reused by the next call
    return before + exc;
}

#define THREADS 256
#define ITEMS 8
#define CHUNK (THREADS * ITEMS)
#define PAD(i) ((i) + ((i) >> 5))

template <typename T>
__device__ __forceinline__ void cumsum_rows(const T* __restrict__ x, T* __restrict__ y, int R, int C) {
    __shared__ float buf[CHUNK + CHUNK / 32];
    for (long long row = blockIdx.x; row < R; row += gridDim.x) {
        const T* xr = x + row * C;
        T* yr = y + row * C;
        float carry = 0.0f;
        for (int start = 0; start < C; start += CHUNK) {
            #pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int i = k * THREADS + threadIdx.x;
                buf[PAD(i)] = start + i < C ? to_f32(xr[start + i]) : 0.0f;
            }
            __syncthreads();
            float run[ITEMS];
            float acc = 0.0f;
            const int base = threadIdx.x * ITEMS;
            #pragma unroll
            for (int k = 0; k < ITEMS; ++k) { acc += buf[PAD(base + k)]; run[k] = acc; }
            const float before = carry + block_exclusive_scan(acc);
            #pragma unroll
            for (int k = 0; k < ITEMS; ++k) buf[PAD(base + k)] = before + run[k];
            __syncthreads();
            #pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int i = k * THREADS + threadIdx.x;
                if (start + i < C) yr[start + i] = from_f32<T>(buf[PAD(i)]);
            }
            carry = buf[PAD(CHUNK - 1)];  // the running total through this chunk (its padding adds 0)
            __syncthreads();
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) cumsum_f32(const float* x, float* y, int R, int C) { cumsum_rows(x, y, R, C); }
extern "C" __global__ void __launch_bounds__(THREADS) cumsum_bf16(const bf16* x, bf16* y, int R, int C) { cumsum_rows(x, y, R, C); }
"""

_module = load_module(HIP_SOURCE)

THREADS = 256  # the kernel's THREADS
MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("cumsum_f32"), torch.bfloat16: _module.get_function("cumsum_bf16")}


def kernel_function(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    if x.numel():
        C = x.shape[-1]
        R = x.numel() // C
        _kernels[x.dtype]((min(R, MAX_GRID),), (THREADS,), (x, y, np.int32(R), np.int32(C)))
    return y
