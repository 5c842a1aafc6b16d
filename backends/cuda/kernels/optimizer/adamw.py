"""Three (grads.shape[0]) fused AdamW steps, torch.optim.AdamW semantics (decoupled weight decay,
lerp first moment, bias corrections 1 - beta^t), one thread per element and PER_THREAD elements a
block-width apart: param and both moments are read once, kept in float32 registers across the
steps (rounded once to the dtype at the end, as the float64 reference is) and written once; each
step's gradient is read once. beta^t is carried as a running product from powf(beta, step)."""

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
__device__ __forceinline__ void adamw(const T* __restrict__ param, const T* __restrict__ grads, const T* __restrict__ exp_avg,
                                      const T* __restrict__ exp_avg_sq, T* __restrict__ param_out, T* __restrict__ exp_avg_out,
                                      T* __restrict__ exp_avg_sq_out, long long n, int steps, int step, float lr, float beta1,
                                      float beta2, float eps, float weight_decay) {
    const long long base = (long long)blockIdx.x * blockDim.x * PER_THREAD + threadIdx.x;
    float p[PER_THREAD], m[PER_THREAD], v[PER_THREAD];
    #pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        const long long i = base + (long long)k * blockDim.x;
        p[k] = i < n ? to_f32(param[i]) : 0.0f;
        m[k] = i < n ? to_f32(exp_avg[i]) : 0.0f;
        v[k] = i < n ? to_f32(exp_avg_sq[i]) : 0.0f;
    }
    const float decay = 1.0f - lr * weight_decay;
    float beta1_t = powf(beta1, (float)step), beta2_t = powf(beta2, (float)step);
    for (int s = 0; s < steps; ++s) {
        beta1_t *= beta1;
        beta2_t *= beta2;
        const float step_size = lr / (1.0f - beta1_t);
        const float bc2_sqrt = sqrtf(1.0f - beta2_t);
        const T* g = grads + (long long)s * n;
        #pragma unroll
        for (int k = 0; k < PER_THREAD; ++k) {
            const long long i = base + (long long)k * blockDim.x;
            const float gk = i < n ? to_f32(g[i]) : 0.0f;
            p[k] *= decay;
            m[k] = fmaf(1.0f - beta1, gk - m[k], m[k]);          // lerp(m, g, 1 - beta1)
            v[k] = fmaf(beta2, v[k], (1.0f - beta2) * gk * gk);
            p[k] -= step_size * m[k] / (sqrtf(v[k]) / bc2_sqrt + eps);
        }
    }
    #pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        const long long i = base + (long long)k * blockDim.x;
        if (i < n) {
            param_out[i] = from_f32<T>(p[k]);
            exp_avg_out[i] = from_f32<T>(m[k]);
            exp_avg_sq_out[i] = from_f32<T>(v[k]);
        }
    }
}

extern "C" __global__ void adamw_f32(const float* p, const float* g, const float* m, const float* v, float* po, float* mo,
                                     float* vo, long long n, int steps, int step, float lr, float beta1, float beta2, float eps,
                                     float wd) {
    adamw(p, g, m, v, po, mo, vo, n, steps, step, lr, beta1, beta2, eps, wd);
}
extern "C" __global__ void adamw_bf16(const bf16* p, const bf16* g, const bf16* m, const bf16* v, bf16* po, bf16* mo,
                                      bf16* vo, long long n, int steps, int step, float lr, float beta1, float beta2, float eps,
                                      float wd) {
    adamw(p, g, m, v, po, mo, vo, n, steps, step, lr, beta1, beta2, eps, wd);
}
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

THREADS, PER_THREAD = 256, 4
_kernels = {torch.float32: _module.get_function("adamw_f32"), torch.bfloat16: _module.get_function("adamw_bf16")}


def kernel_function(param, grads, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay):
    param, grads, exp_avg, exp_avg_sq = param.contiguous(), grads.contiguous(), exp_avg.contiguous(), exp_avg_sq.contiguous()
    param_out, exp_avg_out, exp_avg_sq_out = torch.empty_like(param), torch.empty_like(exp_avg), torch.empty_like(exp_avg_sq)
    n = param.numel()
    if n:
        blocks = (n + THREADS * PER_THREAD - 1) // (THREADS * PER_THREAD)
        _kernels[param.dtype]((blocks,), (THREADS,), (param.data_ptr(), grads.data_ptr(), exp_avg.data_ptr(), exp_avg_sq.data_ptr(),
                                                      param_out.data_ptr(), exp_avg_out.data_ptr(), exp_avg_sq_out.data_ptr(),
                                                      np.int64(n), np.int32(grads.shape[0]), np.int32(step), np.float32(lr),
                                                      np.float32(beta1), np.float32(beta2), np.float32(eps),
                                                      np.float32(weight_decay)))
    return param_out, exp_avg_out, exp_avg_sq_out
