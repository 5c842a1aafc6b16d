"""1-D max pooling, kernel 4, stride 2, padding 1: out[j] = max of x[2j - 1 .. 2j + 2] inside the row
(the padding is -inf, i.e. left out). NaN propagates, as in torch. Values are compared in float32
(exact for every dtype, so the output is an input value). Block (32, 8): lanes walk a row's
outputs (a warp's taps are one contiguous stretch), rows over threadIdx.y and the grid's y dimension."""

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
__device__ __forceinline__ void max_pool1d(const T* __restrict__ x, T* __restrict__ y, long long rows, int L, int Lo) {
    FOR_ROWS(row, rows) {
        const T* xr = x + row * L;
        FOR_COLS(j, Lo) {
            const int i0 = max(2 * (int)j - 1, 0), i1 = min(2 * (int)j + 3, L);
            float m = to_f32(xr[i0]);
            for (int i = i0 + 1; i < i1; ++i) {
                const float v = to_f32(xr[i]);
                if (v > m || v != v) m = v;  // once NaN, m stays NaN (NaN > v is false)
            }
            y[row * Lo + j] = from_f32<T>(m);
        }
    }
}

extern "C" __global__ void max_pool1d_f32(const float* x, float* y, long long rows, int L, int Lo) { max_pool1d(x, y, rows, L, Lo); }
extern "C" __global__ void max_pool1d_bf16(const bf16* x, bf16* y, long long rows, int L, int Lo) { max_pool1d(x, y, rows, L, Lo); }
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

BLOCK = (32, 8)  # 32 lanes along a row, 8 rows per block
MAX_GRID_Y = 65535


def _grid(rows, cols):
    return ((cols + 127) // 128, min((rows + 7) // 8, MAX_GRID_Y))


KERNEL, STRIDE, PADDING = 4, 2, 1
_kernels = {torch.float32: _module.get_function("max_pool1d_f32"), torch.bfloat16: _module.get_function("max_pool1d_bf16")}


def kernel_function(x):
    x = x.contiguous()
    N, C, L = x.shape
    Lo = (L + 2 * PADDING - KERNEL) // STRIDE + 1
    y = torch.empty((N, C, max(Lo, 0)), dtype=x.dtype, device=x.device)
    rows = N * C
    if rows and Lo > 0:
        _kernels[x.dtype](_grid(rows, Lo), BLOCK, (x.data_ptr(), y.data_ptr(), np.int64(rows), np.int32(L), np.int32(Lo)))
    return y
