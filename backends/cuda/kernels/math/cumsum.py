"""Row-wise inclusive prefix sum (torch.cumsum(x, dim=-1)) in float32. One block per row walks
it in chunks of THREADS * ITEMS: a coalesced load into shared memory (padded so the per-thread
reads below hit distinct banks), a sequential scan of ITEMS consecutive values per thread, a
block-wide exclusive scan of the thread totals (warp shuffles, then the warp totals), and the
chunk's running total carried into the next chunk."""

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
__device__ __forceinline__ float warp_inclusive_scan(float v) {
    const int lane = threadIdx.x & 31;
    #pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const float t = __shfl_up_sync(FULL_MASK, v, o);
        if (lane >= o) v += t;
    }
    return v;
}
// Exclusive prefix sum of one value per thread across the block (blockDim.x a multiple of 32).
__device__ __forceinline__ float block_exclusive_scan(float v) {
    __shared__ float totals[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const float inc = warp_inclusive_scan(v);
    float exc = __shfl_up_sync(FULL_MASK, inc, 1);
    if (lane == 0) exc = 0.0f;
    if (lane == 31) totals[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        const float t = warp_inclusive_scan(lane < warps ? totals[lane] : 0.0f);
        if (lane < warps) totals[lane] = t;
    }
    __syncthreads();
    const float before = warp > 0 ? totals[warp - 1] : 0.0f;
    __syncthreads();  // totals[] is reused by the next call
    return before + exc;
}

#define THREADS 256
#define ITEMS 8
#define CHUNK (THREADS * ITEMS)
#define PAD(i) ((i) + ((i) >> 5))

template <typename T>
__device__ __forceinline__ void cumsum_rows(const T* __restrict__ x, T* __restrict__ y, int R, int C) {
    __shared__ float buf[CHUNK + CHUNK / 32];
    for (long long row = blockIdx.x; row < R; row += gridDim.x) {
        const T* xr = x + row * C;
        T* yr = y + row * C;
        float carry = 0.0f;
        for (int start = 0; start < C; start += CHUNK) {
            #pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int i = k * THREADS + threadIdx.x;
                buf[PAD(i)] = start + i < C ? to_f32(xr[start + i]) : 0.0f;
            }
            __syncthreads();
            float run[ITEMS];
            float acc = 0.0f;
            const int base = threadIdx.x * ITEMS;
            #pragma unroll
            for (int k = 0; k < ITEMS; ++k) { acc += buf[PAD(base + k)]; run[k] = acc; }
            const float before = carry + block_exclusive_scan(acc);
            #pragma unroll
            for (int k = 0; k < ITEMS; ++k) buf[PAD(base + k)] = before + run[k];
            __syncthreads();
            #pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int i = k * THREADS + threadIdx.x;
                if (start + i < C) yr[start + i] = from_f32<T>(buf[PAD(i)]);
            }
            carry = buf[PAD(CHUNK - 1)];  // the running total through this chunk (its padding adds 0)
            __syncthreads();
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) cumsum_f32(const float* x, float* y, int R, int C) { cumsum_rows(x, y, R, C); }
extern "C" __global__ void __launch_bounds__(THREADS) cumsum_bf16(const bf16* x, bf16* y, int R, int C) { cumsum_rows(x, y, R, C); }
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

THREADS = 256  # the kernel's THREADS
MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("cumsum_f32"), torch.bfloat16: _module.get_function("cumsum_bf16")}


def kernel_function(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    if x.numel():
        C = x.shape[-1]
        R = x.numel() // C
        _kernels[x.dtype]((min(R, MAX_GRID),), (THREADS,), (x.data_ptr(), y.data_ptr(), np.int32(R), np.int32(C)))
    return y
