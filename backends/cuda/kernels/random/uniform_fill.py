"""Fill [R, cols] with U[low[r], high[r]) from an explicit seed, counter-based: Philox4x32-10 keyed
by the seed with counter (column group, row) gives the 32-bit words of columns 4g .. 4g + 3 of a
row, so a value depends only on (seed, position). u = (word >> 8) 2^-24 in [0, 1) carries float32
resolution; y = low + (high - low) u in float32, clamped to high against the rounding of the
product. Block (32, 8): lanes walk a row's column groups, rows over threadIdx.y and the grid's y
dimension."""

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

// Philox4x32-10 (Salmon et al., SC'11): ten rounds of multiply-xor on a 128-bit counter, keyed by
// the 64-bit seed; four independent 32-bit words per counter value.
__device__ __forceinline__ void philox4x32(unsigned c[4], unsigned k0, unsigned k1) {
    #pragma unroll
    for (int r = 0; r < 10; ++r) {
        const unsigned hi0 = __umulhi(0xD2511F53u, c[0]), lo0 = 0xD2511F53u * c[0];
        const unsigned hi1 = __umulhi(0xCD9E8D57u, c[2]), lo1 = 0xCD9E8D57u * c[2];
        const unsigned n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
        c[0] = n0; c[1] = lo1; c[2] = n2; c[3] = lo0;
        k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
    }
}

template <typename T>
__device__ __forceinline__ void uniform_fill(const T* __restrict__ low, const T* __restrict__ high, T* __restrict__ y, long long rows,
                                             long long cols, unsigned long long seed) {
    const long long groups = (cols + 3) / 4;
    FOR_ROWS(row, rows) {
        const float lo = to_f32(low[row]), hi = to_f32(high[row]);
        T* yr = y + row * cols;
        FOR_COLS(grp, groups) {
            unsigned c[4] = {(unsigned)grp, (unsigned)((unsigned long long)grp >> 32), (unsigned)row, (unsigned)((unsigned long long)row >> 32)};
            philox4x32(c, (unsigned)seed, (unsigned)(seed >> 32));
            #pragma unroll
            for (int k = 0; k < 4; ++k) {
                const long long col = grp * 4 + k;
                if (col < cols) yr[col] = from_f32<T>(fminf(fmaf(hi - lo, (float)(c[k] >> 8) * 5.9604644775390625e-08f, lo), hi));
            }
        }
    }
}

extern "C" __global__ void uniform_fill_f32(const float* low, const float* high, float* y, long long rows, long long cols,
                                            unsigned long long seed) {
    uniform_fill(low, high, y, rows, cols, seed);
}
extern "C" __global__ void uniform_fill_bf16(const bf16* low, const bf16* high, bf16* y, long long rows, long long cols,
                                             unsigned long long seed) {
    uniform_fill(low, high, y, rows, cols, seed);
}
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

BLOCK = (32, 8)  # 32 lanes along a row, 8 rows per block
MAX_GRID_Y = 65535


def _grid(rows, cols):
    return ((cols + 511) // 512, min((rows + 7) // 8, MAX_GRID_Y))


_kernels = {torch.float32: _module.get_function("uniform_fill_f32"), torch.bfloat16: _module.get_function("uniform_fill_bf16")}


def kernel_function(low, high, cols, seed):
    low, high = low.contiguous(), high.contiguous()
    rows = low.shape[0]
    y = torch.empty((rows, cols), dtype=low.dtype, device=low.device)
    if rows and cols:
        _kernels[low.dtype](_grid(rows, cols), BLOCK, (low.data_ptr(), high.data_ptr(), y.data_ptr(), np.int64(rows), np.int64(cols),
                                                       np.uint64(seed % 2**64)))
    return y
