"""Rotary position embedding, rotate-half layout: y = x * cos + rotate_half(x) * sin with cos, sin
[S, D] broadcast over batch and heads, float32 for every dtype. Each thread owns a pair (d,
d + D/2), reading both x values once and writing y[d] = x[d] cos[d] - x[d + D/2] sin[d] and
y[d + D/2] = x[d + D/2] cos[d + D/2] + x[d] sin[d + D/2]. Block (32, 8): lanes walk a row's pairs
(coalesced), threadIdx.y and the grid's y dimension pick the row (b, s, h), whose position s is
found once per row."""

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

// Block (32, 8): lanes walk a row's columns, threadIdx.y picks the row; both grid-stride.
#define FOR_ROWS(row, rows) \
    for (long long row = (long long)blockIdx.y * blockDim.y + threadIdx.y; row < (rows); row += (long long)gridDim.y * blockDim.y)
#define FOR_COLS(col, cols) \
    for (long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x; col < (cols); col += (long long)gridDim.x * blockDim.x)

template <typename T>
__device__ __forceinline__ void rope(const T* __restrict__ x, const T* __restrict__ cos_t, const T* __restrict__ sin_t, T* __restrict__ y,
                                     long long rows, int S, int H, int D) {
    const int half = D / 2;
    FOR_ROWS(row, rows) {  // row = (b S + s) H + h
        const long long s = (row / H) % S;
        const T* xr = x + row * D;
        T* yr = y + row * D;
        const T* c = cos_t + s * D;
        const T* sn = sin_t + s * D;
        FOR_COLS(d, half) {
            const float x1 = to_f32(xr[d]), x2 = to_f32(xr[d + half]);
            yr[d] = from_f32<T>(fmaf(x1, to_f32(c[d]), -x2 * to_f32(sn[d])));
            yr[d + half] = from_f32<T>(fmaf(x2, to_f32(c[d + half]), x1 * to_f32(sn[d + half])));
        }
    }
}

extern "C" __global__ void rope_f32(const float* x, const float* c, const float* s, float* y, long long rows, int S, int H, int D) {
    rope(x, c, s, y, rows, S, H, D);
}
extern "C" __global__ void rope_bf16(const bf16* x, const bf16* c, const bf16* s, bf16* y, long long rows, int S, int H, int D) {
    rope(x, c, s, y, rows, S, H, D);
}
"""

_module = load_module(HIP_SOURCE)

BLOCK = (32, 8)  # 32 lanes along a row, 8 rows per block
MAX_GRID_Y = 65535


def _grid(rows, cols):
    return ((cols + 127) // 128, min((rows + 7) // 8, MAX_GRID_Y))


_kernels = {torch.float32: _module.get_function("rope_f32"), torch.bfloat16: _module.get_function("rope_bf16")}


def kernel_function(x, cos, sin):
    x, cos, sin = x.contiguous(), cos.contiguous(), sin.contiguous()
    B, S, H, D = x.shape
    if D % 2:
        raise ValueError(f"rotate-half RoPE needs an even head dim, got {D}")
    y = torch.empty_like(x)
    rows = B * S * H
    if rows and D:
        _kernels[x.dtype](_grid(rows, D // 2), BLOCK, (x, cos, sin, y, np.int64(rows),
                                                       np.int32(S), np.int32(H), np.int32(D)))
    return y
