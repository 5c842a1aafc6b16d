"""Global average pooling, x.mean(dim=(2, 3)) of NCHW -> [N, C], accumulated in float32 for every
dtype. One block per plane (H W contiguous values): each thread sums a strided, coalesced slice
(UNROLL loads in flight), then a shuffle reduction within warps and across them; the mean is
rounded once to the dtype."""

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

#define UNROLL 4

template <typename T>
__device__ __forceinline__ void plane_means(const T* __restrict__ x, T* __restrict__ y, long long planes, long long hw) {
    for (long long plane = blockIdx.x; plane < planes; plane += gridDim.x) {
        const T* xp = x + plane * hw;
        float s = 0.0f;
        long long i = threadIdx.x;
        for (; i + (UNROLL - 1) * (long long)blockDim.x < hw; i += UNROLL * (long long)blockDim.x) {
            float v[UNROLL];
            #pragma unroll
            for (int k = 0; k < UNROLL; ++k) v[k] = to_f32(xp[i + k * (long long)blockDim.x]);
            #pragma unroll
            for (int k = 0; k < UNROLL; ++k) s += v[k];
        }
        for (; i < hw; i += blockDim.x) s += to_f32(xp[i]);
        s = block_sum(s);
        if (threadIdx.x == 0) y[plane] = from_f32<T>(s / (float)hw);
    }
}

extern "C" __global__ void global_avg_pool_f32(const float* x, float* y, long long planes, long long hw) { plane_means(x, y, planes, hw); }
extern "C" __global__ void global_avg_pool_bf16(const bf16* x, bf16* y, long long planes, long long hw) { plane_means(x, y, planes, hw); }
"""

_module = load_module(HIP_SOURCE)

MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("global_avg_pool_f32"), torch.bfloat16: _module.get_function("global_avg_pool_bf16")}


def kernel_function(x):
    x = x.contiguous()
    N, C, H, W = x.shape
    y = torch.empty((N, C), dtype=x.dtype, device=x.device)
    planes, hw = N * C, H * W
    if planes and hw:
        threads = 256 if hw >= 1024 else 64
        _kernels[x.dtype]((min(planes, MAX_GRID),), (threads,), (x, y, np.int64(planes), np.int64(hw)))
    return y
