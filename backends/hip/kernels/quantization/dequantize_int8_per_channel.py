"""Per-channel int8 dequantization x = q * scale[n], the product formed in float32 (exact operands)
and rounded once to the output dtype, which out_dtype names. Block (32, 8): lanes walk row n's
codes (coalesced bytes in, the dtype out), the row's scale read once per row; rows over threadIdx.y
and the grid's y dimension."""

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
__device__ __forceinline__ void dequantize(const signed char* __restrict__ q, const float* __restrict__ scale, T* __restrict__ x,
                                           long long rows, long long cols) {
    FOR_ROWS(row, rows) {
        const float s = scale[row];
        const long long base = row * cols;
        FOR_COLS(col, cols) x[base + col] = from_f32<T>((float)q[base + col] * s);
    }
}

extern "C" __global__ void dequantize_f32(const signed char* q, const float* scale, float* x, long long rows, long long cols) {
    dequantize(q, scale, x, rows, cols);
}
extern "C" __global__ void dequantize_f16(const signed char* q, const float* scale, f16* x, long long rows, long long cols) {
    dequantize(q, scale, x, rows, cols);
}
extern "C" __global__ void dequantize_bf16(const signed char* q, const float* scale, bf16* x, long long rows, long long cols) {
    dequantize(q, scale, x, rows, cols);
}
"""

_module = load_module(HIP_SOURCE)

BLOCK = (32, 8)  # 32 lanes along a row, 8 rows per block
MAX_GRID_Y = 65535


def _grid(rows, cols):
    return ((cols + 127) // 128, min((rows + 7) // 8, MAX_GRID_Y))

OUT_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
_kernels = {torch.float32: _module.get_function("dequantize_f32"), torch.float16: _module.get_function("dequantize_f16"),
            torch.bfloat16: _module.get_function("dequantize_bf16")}


def kernel_function(q, scale, out_dtype):
    q, scale = q.contiguous(), scale.contiguous()
    dtype = OUT_DTYPES[out_dtype]
    x = torch.empty(q.shape, dtype=dtype, device=q.device)
    N, K = q.shape
    if N and K:
        _kernels[dtype](_grid(N, K), BLOCK, (q, scale, x, np.int64(N), np.int64(K)))
    return x
