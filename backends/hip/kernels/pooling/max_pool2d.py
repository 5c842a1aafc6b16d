"""2-D max pooling, kernel 3, stride 2, padding 1 (implicit -inf padding: out-of-range taps are
skipped), NCHW. One thread per output; neighbouring threads read neighbouring windows, which
overlap, so the cache serves most taps. A NaN in a window gives NaN, as in torch."""

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

template <typename T>
__device__ __forceinline__ void max_pool(const T* __restrict__ x, T* __restrict__ y, long long total, int H, int W, int OH, int OW) {
    for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += (long long)gridDim.x * blockDim.x) {
        const int ow = (int)(o % OW);
        const long long t = o / OW;
        const int oh = (int)(t % OH);
        const T* xp = x + (t / OH) * H * W;
        const int h0 = oh * 2 - 1, w0 = ow * 2 - 1;
        float m = __int_as_float(0xff800000);
        #pragma unroll
        for (int dy = 0; dy < 3; ++dy) {
            const int h = h0 + dy;
            if (h < 0 || h >= H) continue;
            #pragma unroll
            for (int dx = 0; dx < 3; ++dx) {
                const int w = w0 + dx;
                if (w < 0 || w >= W) continue;
                const float v = to_f32(xp[(long long)h * W + w]);
                if (v > m || v != v) m = v;  // once NaN, stays NaN
            }
        }
        y[o] = from_f32<T>(m);
    }
}

extern "C" __global__ void max_pool_f32(const float* x, float* y, long long total, int H, int W, int OH, int OW) {
    max_pool(x, y, total, H, W, OH, OW);
}
extern "C" __global__ void max_pool_bf16(const bf16* x, bf16* y, long long total, int H, int W, int OH, int OW) {
    max_pool(x, y, total, H, W, OH, OW);
}
"""

_module = load_module(HIP_SOURCE)

KERNEL, STRIDE, PADDING = 3, 2, 1  # fixed in the kernel
THREADS = 256
MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("max_pool_f32"), torch.bfloat16: _module.get_function("max_pool_bf16")}


def kernel_function(x):
    x = x.contiguous()
    N, C, H, W = x.shape
    OH, OW = (H + 2 * PADDING - KERNEL) // STRIDE + 1, (W + 2 * PADDING - KERNEL) // STRIDE + 1
    y = torch.empty((N, C, OH, OW), dtype=x.dtype, device=x.device)
    total = y.numel()
    if total:
        blocks = min((total + THREADS - 1) // THREADS, MAX_GRID)
        _kernels[x.dtype]((blocks,), (THREADS,), (x, y, np.int64(total), np.int32(H), np.int32(W), np.int32(OH),
                                                  np.int32(OW)))
    return y
