"""Dropout with an explicit seed: keep an element when its uniform draw is >= p, and scale kept
elements by 1 / (1 - p) (as x / (1 - p), in float32). The draws come from Philox4x32-10, a
counter-based generator keyed by the seed: each thread's counter (its global index) yields four
32-bit words for its four elements, so the mask depends only on (seed, position)."""

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

#define DIV_RN(a, b) __fdiv_rn((a), (b))  // IEEE round-to-nearest division
#define PER_THREAD 4

// Philox4x32-10 (Salmon et al., SC'11): ten rounds of multiply-xor on a 128-bit counter.
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
__device__ __forceinline__ void dropout(const T* __restrict__ x, T* __restrict__ y, long long n, float p, float keep_scale,
                                        unsigned long long seed) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned c[4] = {(unsigned)tid, (unsigned)((unsigned long long)tid >> 32), 0u, 0u};
    philox4x32(c, (unsigned)seed, (unsigned)(seed >> 32));
    const long long base = (long long)blockIdx.x * blockDim.x * PER_THREAD + threadIdx.x;
    #pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        const long long i = base + (long long)k * blockDim.x;
        if (i < n) {
            const float u = (float)(c[k] >> 8) * 5.9604644775390625e-08f;  // 24 random bits -> [0, 1)
            y[i] = from_f32<T>(u >= p ? DIV_RN(to_f32(x[i]), keep_scale) : 0.0f);
        }
    }
}

extern "C" __global__ void dropout_f32(const float* x, float* y, long long n, float p, float keep, unsigned long long seed) {
    dropout(x, y, n, p, keep, seed);
}
extern "C" __global__ void dropout_bf16(const bf16* x, bf16* y, long long n, float p, float keep, unsigned long long seed) {
    dropout(x, y, n, p, keep, seed);
}
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

THREADS, PER_THREAD = 256, 4
MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("dropout_f32"), torch.bfloat16: _module.get_function("dropout_bf16")}


def kernel_function(x, p, seed):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        blocks = (n + THREADS * PER_THREAD - 1) // (THREADS * PER_THREAD)
        if blocks > MAX_GRID:
            raise ValueError("dropout: tensor too large for one launch")
        # x / (1 - p) with 1 - p rounded to float32, as torch divides a float32 tensor by a Python float.
        _kernels[x.dtype]((blocks,), (THREADS,), (x.data_ptr(), y.data_ptr(), np.int64(n), np.float32(p), np.float32(1.0 - p),
                                                  np.uint64(seed % 2**64)))
    return y
