"""Per-row cross entropy, loss = logsumexp(row) - row[target], in float32. One block per row,
one pass over the logits: each thread keeps a running (max, sum of exp(x - max)) pair (one exp per
element, rescaled when the max grows), the pairs are merged across the block, and thread 0 writes
max + log(sum) - x[target]. Rows far above or below zero (the task's offsets) never overflow.
ignore_index -100 gives 0, as in torch."""

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

#define FULL_MASK 0xffffffffu
#define NEG_INF __int_as_float(0xff800000)
// (m, s) stands for the sum s * exp(m); merging two keeps the larger m.
__device__ __forceinline__ void lse_merge(float& m, float& s, float m2, float s2) {
    if (s2 == 0.0f) return;
    if (s == 0.0f) { m = m2; s = s2; return; }
    const float mx = fmaxf(m, m2);
    s = s * expf(m - mx) + s2 * expf(m2 - mx);
    m = mx;
}
__device__ __forceinline__ void warp_lse(float& m, float& s) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(FULL_MASK, m, o), s2 = __shfl_xor_sync(FULL_MASK, s, o);
        lse_merge(m, s, m2, s2);
    }
}
__device__ __forceinline__ void block_lse(float& m, float& s) {
    __shared__ float pm[32], ps[32];
    warp_lse(m, s);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { pm[warp] = m; ps[warp] = s; }
    __syncthreads();
    const bool have = lane < (int)(blockDim.x >> 5);
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

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("cross_entropy_f32"), torch.bfloat16: _module.get_function("cross_entropy_bf16")}


def kernel_function(logits, target):
    logits, target = logits.contiguous(), target.contiguous()
    N, V = logits.shape
    loss = torch.empty((N,), dtype=logits.dtype, device=logits.device)
    if N:
        threads = 512 if V >= 8192 else 256
        _kernels[logits.dtype]((min(N, MAX_GRID),), (threads,), (logits.data_ptr(), target.data_ptr(), loss.data_ptr(), np.int32(N), np.int32(V)))
    return loss
