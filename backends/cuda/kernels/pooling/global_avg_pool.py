"""Global average pooling, x.mean(dim=(2, 3)) of NCHW -> [N, C], accumulated in float32 for every
dtype. One block per plane (H W contiguous values): each thread sums a strided, coalesced slice
(UNROLL loads in flight), then a shuffle reduction within warps and across them; the mean is
rounded once to the dtype."""

import cupy
import numpy as np
import torch

CUDA_SOURCE = r"""
// 16-bit floats travel as raw bits: NVRTC then needs neither cuda_fp16.h nor cuda_bf16.h (CuPy's
// bundled copies are not always in step with the toolkit). fp16 converts with PTX cvt; bf16 with
// integer round-to-nearest-even.
struct bf16 { unsigned short bits; };
struct f16 { unsigned short bits; };
__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(bf16 v) { return __uint_as_float(((unsigned)v.bits) << 16); }
__device__ __forceinline__ float to_f32(f16 v) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits)); return f; }
template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ f16 from_f32<f16>(float v) { f16 r; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(v)); return r; }
template <> __device__ __forceinline__ bf16 from_f32<bf16>(float v) {
    unsigned u = __float_as_uint(v);
    bf16 r;
    r.bits = (u & 0x7fffffffu) > 0x7f800000u ? (unsigned short)((u >> 16) | 0x40u)                 // NaN stays NaN
                                             : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // nearest even
    return r;
}

#define FULL_MASK 0xffffffffu
__device__ __forceinline__ float warp_sum(float v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}
// Block-wide reductions; every thread gets the result. blockDim.x: a multiple of 32, at most 1024.
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float part[32];
    v = warp_sum(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = warp_sum(lane < (int)(blockDim.x >> 5) ? part[lane] : 0.0f);
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

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("global_avg_pool_f32"), torch.bfloat16: _module.get_function("global_avg_pool_bf16")}


def kernel_function(x):
    x = x.contiguous()
    N, C, H, W = x.shape
    y = torch.empty((N, C), dtype=x.dtype, device=x.device)
    planes, hw = N * C, H * W
    if planes and hw:
        threads = 256 if hw >= 1024 else 64
        _kernels[x.dtype]((min(planes, MAX_GRID),), (threads,), (x.data_ptr(), y.data_ptr(), np.int64(planes), np.int64(hw)))
    return y
