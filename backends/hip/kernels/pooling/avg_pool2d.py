"""2-D average pooling, kernel 3, stride 2, padding 1, count_include_pad=False, in float32 for every
dtype: each output sums the in-image taps of its window and divides by their count (4 at a
corner, 6 on an edge, 9 inside). Block (32, 8): lanes walk an output row (each warp's taps cover
a contiguous stretch of three input rows), threadIdx.y and the grid's y dimension pick the output
row (n, c, oh)."""

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
__device__ __forceinline__ void avg_pool(const T* __restrict__ x, T* __restrict__ y, long long rows, int H, int W, int Ho, int Wo) {
    FOR_ROWS(row, rows) {  // row = (n C + c) Ho + oh
        const long long plane = row / Ho;
        const int oh = (int)(row - plane * Ho);
        const int h0 = max(2 * oh - 1, 0), h1 = min(2 * oh + 2, H);
        const T* xp = x + plane * H * W;
        FOR_COLS(ow, Wo) {
            const int w0 = max(2 * (int)ow - 1, 0), w1 = min(2 * (int)ow + 2, W);
            float s = 0.0f;
            for (int h = h0; h < h1; ++h)
                for (int w = w0; w < w1; ++w) s += to_f32(xp[(long long)h * W + w]);
            y[row * Wo + ow] = from_f32<T>(s / (float)((h1 - h0) * (w1 - w0)));
        }
    }
}

extern "C" __global__ void avg_pool_f32(const float* x, float* y, long long rows, int H, int W, int Ho, int Wo) {
    avg_pool(x, y, rows, H, W, Ho, Wo);
}
extern "C" __global__ void avg_pool_bf16(const bf16* x, bf16* y, long long rows, int H, int W, int Ho, int Wo) {
    avg_pool(x, y, rows, H, W, Ho, Wo);
}
"""

_module = load_module(HIP_SOURCE)

BLOCK = (32, 8)  # 32 lanes along a row, 8 rows per block
MAX_GRID_Y = 65535


def _grid(rows, cols):
    return ((cols + 127) // 128, min((rows + 7) // 8, MAX_GRID_Y))


KERNEL, STRIDE, PADDING = 3, 2, 1
_kernels = {torch.float32: _module.get_function("avg_pool_f32"), torch.bfloat16: _module.get_function("avg_pool_bf16")}


def kernel_function(x):
    x = x.contiguous()
    N, C, H, W = x.shape
    Ho, Wo = (H + 2 * PADDING - KERNEL) // STRIDE + 1, (W + 2 * PADDING - KERNEL) // STRIDE + 1
    y = torch.empty((N, C, Ho, Wo), dtype=x.dtype, device=x.device)
    rows = N * C * Ho
    if rows and Wo:
        _kernels[x.dtype](_grid(rows, Wo), BLOCK, (x, y, np.int64(rows), np.int32(H), np.int32(W),
                                                   np.int32(Ho), np.int32(Wo)))
    return y
