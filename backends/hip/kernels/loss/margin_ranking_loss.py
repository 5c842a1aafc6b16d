"""Element-wise margin ranking loss max(0, margin - y (x1 - x2)) in float32 for every dtype (the
difference of two nearby scores is formed in float32, not in the 16-bit input type). Memory-bound:
PER_THREAD coalesced elements per thread, loads in flight together."""

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

#define PER_THREAD 4

template <typename T>
__device__ __forceinline__ void margin_ranking(const T* __restrict__ x1, const T* __restrict__ x2, const T* __restrict__ y,
                                               T* __restrict__ out, long long n, float margin) {
    const long long base = (long long)blockIdx.x * blockDim.x * PER_THREAD + threadIdx.x;
    float a[PER_THREAD], b[PER_THREAD], s[PER_THREAD];
    #pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        const long long i = base + (long long)k * blockDim.x;
        a[k] = i < n ? to_f32(x1[i]) : 0.0f;
        b[k] = i < n ? to_f32(x2[i]) : 0.0f;
        s[k] = i < n ? to_f32(y[i]) : 0.0f;
    }
    #pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        const long long i = base + (long long)k * blockDim.x;
        if (i < n) out[i] = from_f32<T>(fmaxf(fmaf(-s[k], a[k] - b[k], margin), 0.0f));
    }
}

extern "C" __global__ void margin_ranking_f32(const float* x1, const float* x2, const float* y, float* out, long long n, float margin) {
    margin_ranking(x1, x2, y, out, n, margin);
}
extern "C" __global__ void margin_ranking_f16(const f16* x1, const f16* x2, const f16* y, f16* out, long long n, float margin) {
    margin_ranking(x1, x2, y, out, n, margin);
}
extern "C" __global__ void margin_ranking_bf16(const bf16* x1, const bf16* x2, const bf16* y, bf16* out, long long n, float margin) {
    margin_ranking(x1, x2, y, out, n, margin);
}
"""

_module = load_module(HIP_SOURCE)

THREADS, PER_THREAD = 256, 4
_kernels = {torch.float32: _module.get_function("margin_ranking_f32"), torch.float16: _module.get_function("margin_ranking_f16"),
            torch.bfloat16: _module.get_function("margin_ranking_bf16")}


def kernel_function(x1, x2, y, margin):
    x1, x2, y = x1.contiguous(), x2.contiguous(), y.contiguous()
    out = torch.empty_like(x1)
    n = x1.numel()
    if n:
        blocks = (n + THREADS * PER_THREAD - 1) // (THREADS * PER_THREAD)
        _kernels[x1.dtype]((blocks,), (THREADS,), (x1, x2, y, out, np.int64(n),
                                                   np.float32(margin)))
    return out
