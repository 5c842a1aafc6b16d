"""Per-tensor asymmetric uint8 quantization. Three launches, float32 arithmetic in the reference's
order: (1) per-block (min, max) over grid-stride slices of the flattened tensor, reduced with
shuffles within warps and across them, into a [blocks, 2] scratch (no atomics: nothing to zero);
(2) one block reduces the partials and writes scale = max(hi - lo, 1e-8) / 255 (lo, hi: the range
widened to contain 0) and zero_point = clamp(rint(-lo / scale), 0, 255) as 0-dim tensors;
(3) q = clamp(rint(x / scale) + zero_point, 0, 255), IEEE division and round-half-to-even, reading
scale and zero_point from device memory."""

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

// Block-wide (min, max); every thread gets the result. blockDim.x: a multiple of 32, at most 1024.
__device__ __forceinline__ void block_minmax(float& lo, float& hi) {
    __shared__ float plo[32], phi[32];
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, o));
        hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, o));
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { plo[warp] = lo; phi[warp] = hi; }
    __syncthreads();
    lo = plo[0];
    hi = phi[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); ++w) { lo = fminf(lo, plo[w]); hi = fmaxf(hi, phi[w]); }
    __syncthreads();
}

// (1) per-block (min, max) over a grid-stride slice, UNROLL loads in flight per thread.
#define UNROLL 4
template <typename T>
__device__ __forceinline__ void partial_minmax(const T* __restrict__ x, float* __restrict__ partial, long long n) {
    float lo = __int_as_float(0x7f800000), hi = -__int_as_float(0x7f800000);
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
        float v[UNROLL];
        #pragma unroll
        for (int k = 0; k < UNROLL; ++k) v[k] = to_f32(x[i + k * stride]);
        #pragma unroll
        for (int k = 0; k < UNROLL; ++k) { lo = fminf(lo, v[k]); hi = fmaxf(hi, v[k]); }
    }
    for (; i < n; i += stride) { const float v = to_f32(x[i]); lo = fminf(lo, v); hi = fmaxf(hi, v); }
    block_minmax(lo, hi);
    if (threadIdx.x == 0) { partial[2 * blockIdx.x] = lo; partial[2 * blockIdx.x + 1] = hi; }
}

extern "C" __global__ void partial_minmax_f32(const float* x, float* partial, long long n) { partial_minmax(x, partial, n); }
extern "C" __global__ void partial_minmax_bf16(const bf16* x, float* partial, long long n) { partial_minmax(x, partial, n); }

// (2) one block: the range [min(min x, 0), max(max x, 0)], scale = max(hi - lo, 1e-8) / 255 and
// zero_point = clamp(rint(-lo / scale), 0, 255), in float32 as the reference computes them.
extern "C" __global__ void finish_scale(const float* __restrict__ partial, int blocks, float* __restrict__ scale, int* __restrict__ zero_point) {
    float lo = 0.0f, hi = 0.0f;
    for (int b = threadIdx.x; b < blocks; b += blockDim.x) { lo = fminf(lo, partial[2 * b]); hi = fmaxf(hi, partial[2 * b + 1]); }
    block_minmax(lo, hi);
    if (threadIdx.x == 0) {
        const float s = fmaxf(hi - lo, 1e-8f) / 255.0f;
        *scale = s;
        *zero_point = (int)fminf(fmaxf(rintf(-lo / s), 0.0f), 255.0f);
    }
}

// (3) q = clamp(rint(x / scale) + zero_point, 0, 255), IEEE division, round half to even.
#define PER_THREAD 4
template <typename T>
__device__ __forceinline__ void quantize(const T* __restrict__ x, const float* __restrict__ scale, const int* __restrict__ zero_point,
                                         unsigned char* __restrict__ q, long long n) {
    const float s = *scale, zp = (float)*zero_point;
    const long long base = (long long)blockIdx.x * blockDim.x * PER_THREAD + threadIdx.x;
    #pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        const long long i = base + (long long)k * blockDim.x;
        if (i < n) q[i] = (unsigned char)fminf(fmaxf(rintf(to_f32(x[i]) / s) + zp, 0.0f), 255.0f);
    }
}

extern "C" __global__ void quantize_f32(const float* x, const float* scale, const int* zp, unsigned char* q, long long n) {
    quantize(x, scale, zp, q, n);
}
extern "C" __global__ void quantize_bf16(const bf16* x, const float* scale, const int* zp, unsigned char* q, long long n) {
    quantize(x, scale, zp, q, n);
}
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

THREADS, PER_THREAD = 256, 4
MAX_PARTIALS = 1024  # blocks of the min/max pass, reduced by one block of as many threads
_minmax = {torch.float32: _module.get_function("partial_minmax_f32"), torch.bfloat16: _module.get_function("partial_minmax_bf16")}
_finish = _module.get_function("finish_scale")
_quantize = {torch.float32: _module.get_function("quantize_f32"), torch.bfloat16: _module.get_function("quantize_bf16")}


def kernel_function(x):
    x = x.contiguous()
    n = x.numel()
    q = torch.empty(x.shape, dtype=torch.uint8, device=x.device)
    scale = torch.empty((), dtype=torch.float32, device=x.device)
    zero_point = torch.empty((), dtype=torch.int32, device=x.device)
    blocks = max(1, min(MAX_PARTIALS, (n + THREADS * 8 - 1) // (THREADS * 8)))
    partial = torch.empty((blocks, 2), dtype=torch.float32, device=x.device)
    _minmax[x.dtype]((blocks,), (THREADS,), (x.data_ptr(), partial.data_ptr(), np.int64(n)))
    _finish((1,), (MAX_PARTIALS,), (partial.data_ptr(), np.int32(blocks), scale.data_ptr(), zero_point.data_ptr()))
    if n:
        _quantize[x.dtype](((n + THREADS * PER_THREAD - 1) // (THREADS * PER_THREAD),), (THREADS,),
                           (x.data_ptr(), scale.data_ptr(), zero_point.data_ptr(), q.data_ptr(), np.int64(n)))
    return q, scale, zero_point
