"""Depthwise 3x3 conv2d (groups = C), stride 1, zero padding 1, with bias, on NCHW. One block
computes a TH x TW tile of one (n, c) plane: the (TH+2) x (TW+2) input halo is staged in shared
memory once (each input element is read from global memory about once), the 9 weights and the
bias sit in registers, and products accumulate in float32."""

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

#define TW 32
#define TH 8

template <typename T>
__device__ __forceinline__ void dwconv3x3(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                          T* __restrict__ y, int planes, int C, int H, int W) {
    __shared__ float tile[TH + 2][TW + 2];
    const int ox0 = blockIdx.x * TW, oy0 = blockIdx.y * TH;
    const int tid = threadIdx.y * TW + threadIdx.x;
    for (int plane = blockIdx.z; plane < planes; plane += gridDim.z) {  // plane = n * C + c
        const int c = plane % C;
        const T* xp = x + (long long)plane * H * W;
        for (int i = tid; i < (TH + 2) * (TW + 2); i += TW * TH) {
            const int ty = i / (TW + 2), tx = i % (TW + 2);
            const int iy = oy0 + ty - 1, ix = ox0 + tx - 1;
            tile[ty][tx] = (iy >= 0 && iy < H && ix >= 0 && ix < W) ? to_f32(xp[(long long)iy * W + ix]) : 0.0f;
        }
        float wk[9];
        #pragma unroll
        for (int k = 0; k < 9; ++k) wk[k] = to_f32(w[c * 9 + k]);
        const float bias = to_f32(b[c]);
        __syncthreads();
        const int ox = ox0 + threadIdx.x, oy = oy0 + threadIdx.y;
        if (ox < W && oy < H) {
            float acc = 0.0f;
            #pragma unroll
            for (int dy = 0; dy < 3; ++dy) {
                #pragma unroll
                for (int dx = 0; dx < 3; ++dx) acc = fmaf(tile[threadIdx.y + dy][threadIdx.x + dx], wk[dy * 3 + dx], acc);
            }
            y[(long long)plane * H * W + (long long)oy * W + ox] = from_f32<T>(acc + bias);
        }
        __syncthreads();  // the tile is refilled for the next plane
    }
}

extern "C" __global__ void dwconv3x3_f32(const float* x, const float* w, const float* b, float* y, int planes, int C, int H, int W) {
    dwconv3x3(x, w, b, y, planes, C, H, W);
}
extern "C" __global__ void dwconv3x3_bf16(const bf16* x, const bf16* w, const bf16* b, bf16* y, int planes, int C, int H, int W) {
    dwconv3x3(x, w, b, y, planes, C, H, W);
}
"""

_module = load_module(HIP_SOURCE)

TW, TH = 32, 8
MAX_GRID_Z = 65535
_kernels = {torch.float32: _module.get_function("dwconv3x3_f32"), torch.bfloat16: _module.get_function("dwconv3x3_bf16")}


def kernel_function(x, weight, bias):
    x, weight, bias = x.contiguous(), weight.contiguous(), bias.contiguous()
    N, C, H, W = x.shape
    y = torch.empty_like(x)
    planes = N * C
    if planes and H and W:
        grid = ((W + TW - 1) // TW, (H + TH - 1) // TH, min(planes, MAX_GRID_Z))
        _kernels[x.dtype](grid, (TW, TH), (x, weight, bias, y, np.int32(planes), np.int32(C),
                                           np.int32(H), np.int32(W)))
    return y
