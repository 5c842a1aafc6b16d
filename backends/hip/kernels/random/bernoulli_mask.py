"""y = bernoulli(p) elementwise from an explicit seed, 0/1 in the dtype of p. Philox4x32-10, keyed by
the seed, with the group index g as counter: its four words decide elements 4g .. 4g + 3, so the
mask depends only on (seed, position). y = 1 when the 32-bit word u < p 2^32 (p clamped to [0, 1]
and scaled exactly, a power of two): P(y = 1) = p to 2^-32, so p = 1 - 2^-11 keeps its 2^-11
chance of a 0, p = 0 never gives 1 and p = 1 always does. One thread per group of 4 (grid-stride)."""

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
__device__ __forceinline__ void bernoulli(const T* __restrict__ p, T* __restrict__ y, long long n, unsigned long long seed) {
    const long long groups = (n + 3) / 4;
    for (long long grp = (long long)blockIdx.x * blockDim.x + threadIdx.x; grp < groups; grp += (long long)gridDim.x * blockDim.x) {
        unsigned c[4] = {(unsigned)grp, (unsigned)((unsigned long long)grp >> 32), 0u, 0u};
        philox4x32(c, (unsigned)seed, (unsigned)(seed >> 32));
        #pragma unroll
        for (int k = 0; k < 4; ++k) {
            const long long i = grp * 4 + k;
            if (i < n) {
                const float pk = fminf(fmaxf(to_f32(p[i]), 0.0f), 1.0f);
                const unsigned long long threshold = (unsigned long long)(pk * 4294967296.0f);  // p 2^32, <= 2^32
                y[i] = from_f32<T>((unsigned long long)c[k] < threshold ? 1.0f : 0.0f);
            }
        }
    }
}

extern "C" __global__ void bernoulli_f32(const float* p, float* y, long long n, unsigned long long seed) { bernoulli(p, y, n, seed); }
extern "C" __global__ void bernoulli_bf16(const bf16* p, bf16* y, long long n, unsigned long long seed) { bernoulli(p, y, n, seed); }
"""

_module = load_module(HIP_SOURCE)

THREADS = 256
MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("bernoulli_f32"), torch.bfloat16: _module.get_function("bernoulli_bf16")}


def kernel_function(p, seed):
    p = p.contiguous()
    y = torch.empty_like(p)
    n = p.numel()
    if n:
        blocks = min(((n + 3) // 4 + THREADS - 1) // THREADS, MAX_GRID)
        _kernels[p.dtype]((blocks,), (THREADS,), (p, y, np.int64(n), np.uint64(seed % 2**64)))
    return y
