"""2x bilinear upsampling of NCHW, align_corners=False (F.interpolate's source index: (o + 0.5) / 2
- 0.5, clamped at 0; the upper neighbour clamped to the last row/column). One thread per output,
float32 weights and arithmetic."""

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

template <typename T>
__device__ __forceinline__ void upsample2x(const T* __restrict__ x, T* __restrict__ y, long long total, int H, int W) {
    const int OH = 2 * H, OW = 2 * W;
    for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += (long long)gridDim.x * blockDim.x) {
        const int ow = (int)(o % OW);
        const long long t = o / OW;
        const int oh = (int)(t % OH);
        const T* xp = x + (t / OH) * H * W;
        const float sy = fmaxf(0.5f * oh - 0.25f, 0.0f), sx = fmaxf(0.5f * ow - 0.25f, 0.0f);
        const int y0 = (int)sy, x0 = (int)sx;
        const int y1 = min(y0 + 1, H - 1), x1 = min(x0 + 1, W - 1);
        const float ly = sy - y0, lx = sx - x0;
        const float v00 = to_f32(xp[(long long)y0 * W + x0]), v01 = to_f32(xp[(long long)y0 * W + x1]);
        const float v10 = to_f32(xp[(long long)y1 * W + x0]), v11 = to_f32(xp[(long long)y1 * W + x1]);
        const float top = (1.0f - lx) * v00 + lx * v01, bottom = (1.0f - lx) * v10 + lx * v11;
        y[o] = from_f32<T>((1.0f - ly) * top + ly * bottom);
    }
}

extern "C" __global__ void upsample2x_f32(const float* x, float* y, long long total, int H, int W) { upsample2x(x, y, total, H, W); }
extern "C" __global__ void upsample2x_bf16(const bf16* x, bf16* y, long long total, int H, int W) { upsample2x(x, y, total, H, W); }
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

THREADS = 256
MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("upsample2x_f32"), torch.bfloat16: _module.get_function("upsample2x_bf16")}


def kernel_function(x):
    x = x.contiguous()
    N, C, H, W = x.shape
    y = torch.empty((N, C, 2 * H, 2 * W), dtype=x.dtype, device=x.device)
    total = y.numel()
    if total:
        blocks = min((total + THREADS - 1) // THREADS, MAX_GRID)
        _kernels[x.dtype]((blocks,), (THREADS,), (x.data_ptr(), y.data_ptr(), np.int64(total), np.int32(H), np.int32(W)))
    return y
