"""Per-row cross entropy, loss = logsumexp(row) - row[target], in float32. One block per row,
one pass over the logits: each thread keeps a running (max, sum of exp(x - max)) pair (one exp per
element, rescaled when the max grows), the pairs are merged across the block, and thread 0 writes
max + log(sum) - x[target]. Rows far above or below zero (the task's offsets) never overflow.
ignore_index -100 gives 0, as in torch."""

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

#define NEG_INF __int_as_float(0xff800000)
// (m, s) stands for the sum s * exp(m); merging two keeps the larger m.
__device__ __forceinline__ void lse_merge(float& m, float& s, float m2, float s2) {
    if (s2 == 0.0f) return;
    if (s == 0.0f) { m = m2; s = s2; return; }
    const float mx = fmaxf(m, m2);
    s = s * expf(m - mx) + s2 * expf(m2 - mx);
    m = mx;
}
// Wavefront-size-agnostic (64 lanes on AMD CDNA, 32 on NVIDIA).
__device__ __forceinline__ void warp_lse(float& m, float& s) {
    for (int o = warpSize / 2; o > 0; o >>= 1) {
        const float m2 = __shfl_xor(m, o), s2 = __shfl_xor(s, o);
        lse_merge(m, s, m2, s2);
    }
}
__device__ __forceinline__ void block_lse(float& m, float& s) {
    __shared__ float pm[32], ps[32];  // a slot per wavefront of the narrowest width
    warp_lse(m, s);
    const int lane = threadIdx.x % warpSize, wave = threadIdx.x / warpSize;
    if (lane == 0) { pm[wave] = m; ps[wave] = s; }
    __syncthreads();
    const bool have = lane < (int)(blockDim.x / warpSize);
    m = have ? pm[lane] : NEG_INF;
    s = have ? ps[lane] : 0.0f;
    warp_lse(m, s);
    __syncthreads();
}

template <typename T>
__device__ __forceinline__ void cross_entropy(const T* __restrict__ logits, const long long* __restrict__ target,
                                              T* __restrict__ loss, int N, int V) {
    for (long long row = blockIdx.x; row < N; row += gridDim.x) {
        const T* xr = logits + row * V;
        float m = NEG_INF, s = 0.0f;
        for (int i = threadIdx.x; i < V; i += blockDim.x) {
            const float v = to_f32(xr[i]);
            if (v > m) { s = s * expf(m - v) + 1.0f; m = v; }
            else if (m > NEG_INF) s += expf(v - m);  // a NaN logit makes s (and the loss) NaN
        }
        block_lse(m, s);
        if (threadIdx.x == 0) {
            const long long t = target[row];
            float out = 0.0f;
            if (t != -100) out = m + logf(s) - ((t >= 0 && t < V) ? to_f32(xr[t]) : __int_as_float(0x7fc00000));
            loss[row] = from_f32<T>(out);
        }
    }
}

extern "C" __global__ void cross_entropy_f32(const float* x, const long long* t, float* loss, int N, int V) {
    cross_entropy(x, t, loss, N, V);
}
extern "C" __global__ void cross_entropy_bf16(const bf16* x, const long long* t, bf16* loss, int N, int V) {
    cross_entropy(x, t, loss, N, V);
}
"""

_module = load_module(HIP_SOURCE)

MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("cross_entropy_f32"), torch.bfloat16: _module.get_function("cross_entropy_bf16")}


def kernel_function(logits, target):
    logits, target = logits.contiguous(), target.contiguous()
    N, V = logits.shape
    loss = torch.empty((N,), dtype=logits.dtype, device=logits.device)
    if N:
        threads = 512 if V >= 8192 else 256
        _kernels[logits.dtype]((min(N, MAX_GRID),), (threads,), (logits, target, loss, np.int32(N), np.int32(V)))
    return loss
