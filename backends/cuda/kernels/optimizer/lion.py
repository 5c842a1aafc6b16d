"""Three (grads.shape[0]) fused Lion steps (sign of the beta1-interpolated momentum, decoupled weight
decay, beta2 EMA; sign(0) = 0), one thread per element and PER_THREAD elements a block-width
apart: param and exp_avg are read once, kept in float32 registers across the steps (rounded once
at the end, as the float64 reference is) and written once; each step's gradient is read once."""

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

#define PER_THREAD 4

template <typename T>
__device__ __forceinline__ void lion(const T* __restrict__ param, const T* __restrict__ grads, const T* __restrict__ exp_avg,
                                     T* __restrict__ param_out, T* __restrict__ exp_avg_out, long long n, int steps, float lr,
                                     float beta1, float beta2, float weight_decay) {
    const long long base = (long long)blockIdx.x * blockDim.x * PER_THREAD + threadIdx.x;
    float p[PER_THREAD], m[PER_THREAD];
    #pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        const long long i = base + (long long)k * blockDim.x;
        p[k] = i < n ? to_f32(param[i]) : 0.0f;
        m[k] = i < n ? to_f32(exp_avg[i]) : 0.0f;
    }
    const float decay = 1.0f - lr * weight_decay;
    for (int s = 0; s < steps; ++s) {
        const T* g = grads + (long long)s * n;
        #pragma unroll
        for (int k = 0; k < PER_THREAD; ++k) {
            const long long i = base + (long long)k * blockDim.x;
            const float gk = i < n ? to_f32(g[i]) : 0.0f;
            const float c = fmaf(beta1, m[k], (1.0f - beta1) * gk);
            const float sign = (float)((c > 0.0f) - (c < 0.0f));
            p[k] = fmaf(p[k], decay, -lr * sign);
            m[k] = fmaf(beta2, m[k], (1.0f - beta2) * gk);
        }
    }
    #pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        const long long i = base + (long long)k * blockDim.x;
        if (i < n) {
            param_out[i] = from_f32<T>(p[k]);
            exp_avg_out[i] = from_f32<T>(m[k]);
        }
    }
}

extern "C" __global__ void lion_f32(const float* p, const float* g, const float* m, float* po, float* mo, long long n, int steps,
                                    float lr, float beta1, float beta2, float wd) {
    lion(p, g, m, po, mo, n, steps, lr, beta1, beta2, wd);
}
extern "C" __global__ void lion_bf16(const bf16* p, const bf16* g, const bf16* m, bf16* po, bf16* mo, long long n, int steps,
                                     float lr, float beta1, float beta2, float wd) {
    lion(p, g, m, po, mo, n, steps, lr, beta1, beta2, wd);
}
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

THREADS, PER_THREAD = 256, 4
_kernels = {torch.float32: _module.get_function("lion_f32"), torch.bfloat16: _module.get_function("lion_bf16")}


def kernel_function(param, grads, exp_avg, lr, beta1, beta2, weight_decay):
    param, grads, exp_avg = param.contiguous(), grads.contiguous(), exp_avg.contiguous()
    param_out, exp_avg_out = torch.empty_like(param), torch.empty_like(exp_avg)
    n = param.numel()
    if n:
        blocks = (n + THREADS * PER_THREAD - 1) // (THREADS * PER_THREAD)
        _kernels[param.dtype]((blocks,), (THREADS,), (param.data_ptr(), grads.data_ptr(), exp_avg.data_ptr(), param_out.data_ptr(),
                                                      exp_avg_out.data_ptr(), np.int64(n), np.int32(grads.shape[0]),
                                                      np.float32(lr), np.float32(beta1), np.float32(beta2),
                                                      np.float32(weight_decay)))
    return param_out, exp_avg_out
