"""Per-row symmetric int8 quantization in float32: scale = max(amax, 1e-8) / 127 (an IEEE-rounded
division), q = clamp(rint(x / scale), -127, 127), rint rounding half to even. One block per row:
a block-wide max of |x|, then a second pass (cache hits) that writes q."""

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
__device__ __forceinline__ float warp_sum(float v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}
// Block-wide reductions; every thread gets the result. blockDim.x: a multiple of 32, at most 1024.
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float part[32];
    v = warp_sum(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = warp_sum(lane < (int)(blockDim.x >> 5) ? part[lane] : 0.0f);
    __syncthreads();  // part[] is reused by the next call
    return v;
}
__device__ __forceinline__ float block_max(float v) {
    __shared__ float part[32];
    v = warp_max(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = warp_max(lane < (int)(blockDim.x >> 5) ? part[lane] : -3.402823466e38f);
    __syncthreads();
    return v;
}

#define DIV_RN(a, b) __fdiv_rn((a), (b))  // IEEE round-to-nearest division
template <typename T>
__device__ __forceinline__ void quantize_rows(const T* __restrict__ x, signed char* __restrict__ q, float* __restrict__ scale,
                                              int R, int C) {
    for (long long row = blockIdx.x; row < R; row += gridDim.x) {
        const T* xr = x + row * C;
        float amax = 0.0f;
        for (int i = threadIdx.x; i < C; i += blockDim.x) amax = fmaxf(amax, fabsf(to_f32(xr[i])));
        amax = block_max(amax);
        const float s = DIV_RN(fmaxf(amax, 1e-8f), 127.0f);
        if (threadIdx.x == 0) scale[row] = s;
        signed char* qr = q + row * C;
        for (int i = threadIdx.x; i < C; i += blockDim.x) {
            const float v = fminf(fmaxf(rintf(DIV_RN(to_f32(xr[i]), s)), -127.0f), 127.0f);
            qr[i] = (signed char)(int)v;
        }
    }
}

extern "C" __global__ void quantize_f32(const float* x, signed char* q, float* scale, int R, int C) { quantize_rows(x, q, scale, R, C); }
extern "C" __global__ void quantize_bf16(const bf16* x, signed char* q, float* scale, int R, int C) { quantize_rows(x, q, scale, R, C); }
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

THREADS = 256
MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("quantize_f32"), torch.bfloat16: _module.get_function("quantize_bf16")}


def kernel_function(x):
    x = x.contiguous()
    R, C = x.shape
    q = torch.empty((R, C), dtype=torch.int8, device=x.device)
    scale = torch.empty((R,), dtype=torch.float32, device=x.device)
    if R:
        _kernels[x.dtype]((min(R, MAX_GRID),), (THREADS,), (x.data_ptr(), q.data_ptr(), scale.data_ptr(), np.int32(R), np.int32(C)))
    return q, scale
