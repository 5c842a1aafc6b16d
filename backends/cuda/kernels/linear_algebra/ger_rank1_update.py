"""BLAS ger out of place, out = A + alpha x y^T, in float32 for every dtype: one fused multiply-add
per element, fmaf(alpha x[i], y[j], A[i, j]). Block (32, 8): lanes walk row i's columns (y read
coalesced, x[i] once per row), rows over threadIdx.y and the grid's y dimension."""

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

// Block (32, 8): lanes walk a row's columns, threadIdx.y picks the row; both grid-stride.
#define FOR_ROWS(row, rows) \
    for (long long row = (long long)blockIdx.y * blockDim.y + threadIdx.y; row < (rows); row += (long long)gridDim.y * blockDim.y)
#define FOR_COLS(col, cols) \
    for (long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x; col < (cols); col += (long long)gridDim.x * blockDim.x)

template <typename T>
__device__ __forceinline__ void ger(const T* __restrict__ a, const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out,
                                    long long rows, long long cols, float alpha) {
    FOR_ROWS(row, rows) {
        const float ax = alpha * to_f32(x[row]);
        const long long base = row * cols;
        FOR_COLS(col, cols) out[base + col] = from_f32<T>(fmaf(ax, to_f32(y[col]), to_f32(a[base + col])));
    }
}

extern "C" __global__ void ger_f32(const float* a, const float* x, const float* y, float* out, long long rows, long long cols,
                                   float alpha) {
    ger(a, x, y, out, rows, cols, alpha);
}
extern "C" __global__ void ger_bf16(const bf16* a, const bf16* x, const bf16* y, bf16* out, long long rows, long long cols,
                                    float alpha) {
    ger(a, x, y, out, rows, cols, alpha);
}
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

BLOCK = (32, 8)  # 32 lanes along a row, 8 rows per block
MAX_GRID_Y = 65535


def _grid(rows, cols):
    return ((cols + 127) // 128, min((rows + 7) // 8, MAX_GRID_Y))


_kernels = {torch.float32: _module.get_function("ger_f32"), torch.bfloat16: _module.get_function("ger_bf16")}


def kernel_function(a, x, y, alpha):
    a, x, y = a.contiguous(), x.contiguous(), y.contiguous()
    out = torch.empty_like(a)
    M, N = a.shape
    if M and N:
        _kernels[a.dtype](_grid(M, N), BLOCK, (a.data_ptr(), x.data_ptr(), y.data_ptr(), out.data_ptr(), np.int64(M), np.int64(N),
                                               np.float32(alpha)))
    return out
