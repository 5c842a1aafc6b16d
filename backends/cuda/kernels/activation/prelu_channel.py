"""PReLU with a slope per channel on NCHW: y = x if x > 0 else weight[c] * x, in float32 for every
dtype. The grid's y dimension walks the N * C planes (grid-stride past 65535), so each block reads
its channel's slope once and streams a contiguous stretch of one plane, PER_THREAD coalesced
elements per thread: no per-element division to find the channel."""

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

#define PER_THREAD 4

template <typename T>
__device__ __forceinline__ void prelu(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                                      long long planes, int C, long long hw) {
    for (long long plane = blockIdx.y; plane < planes; plane += gridDim.y) {
        const float a = to_f32(w[plane % C]);
        const T* xp = x + plane * hw;
        T* yp = y + plane * hw;
        const long long base = (long long)blockIdx.x * blockDim.x * PER_THREAD + threadIdx.x;
        float v[PER_THREAD];
        #pragma unroll
        for (int k = 0; k < PER_THREAD; ++k) {
            const long long i = base + (long long)k * blockDim.x;
            v[k] = i < hw ? to_f32(xp[i]) : 0.0f;
        }
        #pragma unroll
        for (int k = 0; k < PER_THREAD; ++k) {
            const long long i = base + (long long)k * blockDim.x;
            if (i < hw) yp[i] = from_f32<T>(v[k] > 0.0f ? v[k] : a * v[k]);
        }
    }
}

extern "C" __global__ void prelu_f32(const float* x, const float* w, float* y, long long planes, int C, long long hw) {
    prelu(x, w, y, planes, C, hw);
}
extern "C" __global__ void prelu_f16(const f16* x, const f16* w, f16* y, long long planes, int C, long long hw) {
    prelu(x, w, y, planes, C, hw);
}
extern "C" __global__ void prelu_bf16(const bf16* x, const bf16* w, bf16* y, long long planes, int C, long long hw) {
    prelu(x, w, y, planes, C, hw);
}
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

THREADS, PER_THREAD = 256, 4
MAX_GRID_Y = 65535
_kernels = {torch.float32: _module.get_function("prelu_f32"), torch.float16: _module.get_function("prelu_f16"),
            torch.bfloat16: _module.get_function("prelu_bf16")}


def kernel_function(x, weight):
    x, weight = x.contiguous(), weight.contiguous()
    y = torch.empty_like(x)
    N, C, H, W = x.shape
    planes, hw = N * C, H * W
    if planes and hw:
        grid = ((hw + THREADS * PER_THREAD - 1) // (THREADS * PER_THREAD), min(planes, MAX_GRID_Y))
        _kernels[x.dtype](grid, (THREADS,), (x.data_ptr(), weight.data_ptr(), y.data_ptr(), np.int64(planes), np.int32(C),
                                             np.int64(hw)))
    return y
