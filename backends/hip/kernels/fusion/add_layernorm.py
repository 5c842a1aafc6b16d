"""Residual add + LayerNorm, h = x + residual, y = LayerNorm(h) * gamma + beta, returning (y, h).
One block per row, float32 throughout: pass 1 forms h (written once, rounded to the dtype) and a
sum shifted by h[0] (rows drift to |mean| ~ 3: the shift keeps the sum from cancelling); pass 2
the centred sum of squares; pass 3 normalises. Passes 2 and 3 re-form h from x and residual
(served from L1/L2) rather than reading the rounded h back, so y is normalised from the exact
float32 sum, as the float64 reference is."""

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

template <typename T>
__device__ __forceinline__ void add_layer_norm_rows(const T* __restrict__ x, const T* __restrict__ res, const T* __restrict__ w,
                                                    const T* __restrict__ b, T* __restrict__ y, T* __restrict__ h, long long R, int C,
                                                    float eps) {
    for (long long row = blockIdx.x; row < R; row += gridDim.x) {
        const T* xr = x + row * C;
        const T* rr = res + row * C;
        const float shift = to_f32(xr[0]) + to_f32(rr[0]);
        float s = 0.0f;
        for (int i = threadIdx.x; i < C; i += blockDim.x) {
            const float v = to_f32(xr[i]) + to_f32(rr[i]);
            h[row * C + i] = from_f32<T>(v);
            s += v - shift;
        }
        const float mean = shift + block_sum(s) / C;
        float q = 0.0f;
        for (int i = threadIdx.x; i < C; i += blockDim.x) { const float d = to_f32(xr[i]) + to_f32(rr[i]) - mean; q = fmaf(d, d, q); }
        const float rstd = 1.0f / sqrtf(block_sum(q) / C + eps);
        for (int i = threadIdx.x; i < C; i += blockDim.x) {
            const float d = to_f32(xr[i]) + to_f32(rr[i]) - mean;
            y[row * C + i] = from_f32<T>(fmaf(d * rstd, to_f32(w[i]), to_f32(b[i])));
        }
    }
}

extern "C" __global__ void add_layer_norm_f32(const float* x, const float* res, const float* w, const float* b, float* y, float* h,
                                              long long R, int C, float eps) {
    add_layer_norm_rows(x, res, w, b, y, h, R, C, eps);
}
extern "C" __global__ void add_layer_norm_bf16(const bf16* x, const bf16* res, const bf16* w, const bf16* b, bf16* y, bf16* h,
                                               long long R, int C, float eps) {
    add_layer_norm_rows(x, res, w, b, y, h, R, C, eps);
}
"""

_module = load_module(HIP_SOURCE)

MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("add_layer_norm_f32"),
            torch.bfloat16: _module.get_function("add_layer_norm_bf16")}


def _threads(cols):
    return 512 if cols >= 4096 else 256

EPS = 1e-5  # the task's eps (F.layer_norm's default)


def kernel_function(x, residual, weight, bias):
    x, residual, weight, bias = x.contiguous(), residual.contiguous(), weight.contiguous(), bias.contiguous()
    y, h = torch.empty_like(x), torch.empty_like(x)
    if x.numel():
        C = x.shape[-1]
        R = x.numel() // C
        _kernels[x.dtype]((min(R, MAX_GRID),), (_threads(C),), (x, residual, weight, bias,
                                                                 y, h, np.int64(R), np.int32(C),
                                                                 np.float32(EPS)))
    return y, h
