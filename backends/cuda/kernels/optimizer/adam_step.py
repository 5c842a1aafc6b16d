"""Adam steps fused in one pass (torch.optim.Adam semantics: no weight decay, amsgrad off): each
thread loads param, exp_avg and exp_avg_sq once, applies every step's gradient in float32 and
writes the three results once. The per-step step size lr / (1 - beta1^t) and 1 / sqrt(1 - beta2^t)
are computed once per block, in double precision, into shared memory."""

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

template <typename T>
__device__ __forceinline__ void adam(const T* __restrict__ p, const T* __restrict__ g, const T* __restrict__ m,
                                     const T* __restrict__ v, T* __restrict__ po, T* __restrict__ mo, T* __restrict__ vo,
                                     long long n, int steps, long long step0, double lr, double beta1, double beta2, float eps) {
    extern __shared__ float coef[];  // [0, steps): step sizes; [steps, 2 steps): 1 / sqrt(bias correction 2)
    for (int k = threadIdx.x; k < steps; k += blockDim.x) {
        const double t = (double)(step0 + 1 + k);
        coef[k] = (float)(lr / (1.0 - pow(beta1, t)));
        coef[steps + k] = (float)(1.0 / sqrt(1.0 - pow(beta2, t)));
    }
    __syncthreads();
    const float w1 = (float)(1.0 - beta1), b2 = (float)beta2, w2 = (float)(1.0 - beta2);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float pp = to_f32(p[i]), mm = to_f32(m[i]), vv = to_f32(v[i]);
        for (int k = 0; k < steps; ++k) {
            const float gg = to_f32(g[(long long)k * n + i]);
            mm = fmaf(w1, gg - mm, mm);                 // exp_avg.lerp_(grad, 1 - beta1)
            vv = fmaf(w2 * gg, gg, vv * b2);            // exp_avg_sq * beta2 + (1 - beta2) * grad^2
            const float denom = sqrtf(vv) * coef[steps + k] + eps;
            pp -= coef[k] * mm / denom;
        }
        po[i] = from_f32<T>(pp);
        mo[i] = from_f32<T>(mm);
        vo[i] = from_f32<T>(vv);
    }
}

extern "C" __global__ void adam_f32(const float* p, const float* g, const float* m, const float* v, float* po, float* mo, float* vo,
                                    long long n, int steps, long long step0, double lr, double beta1, double beta2, float eps) {
    adam(p, g, m, v, po, mo, vo, n, steps, step0, lr, beta1, beta2, eps);
}
extern "C" __global__ void adam_bf16(const bf16* p, const bf16* g, const bf16* m, const bf16* v, bf16* po, bf16* mo, bf16* vo,
                                     long long n, int steps, long long step0, double lr, double beta1, double beta2, float eps) {
    adam(p, g, m, v, po, mo, vo, n, steps, step0, lr, beta1, beta2, eps);
}
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

THREADS = 256
MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("adam_f32"), torch.bfloat16: _module.get_function("adam_bf16")}


def kernel_function(param, grads, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps):
    param, grads = param.contiguous(), grads.contiguous()
    exp_avg, exp_avg_sq = exp_avg.contiguous(), exp_avg_sq.contiguous()
    n, steps = param.numel(), grads.shape[0]
    p_out, m_out, v_out = torch.empty_like(param), torch.empty_like(exp_avg), torch.empty_like(exp_avg_sq)
    if n:
        blocks = min((n + THREADS - 1) // THREADS, MAX_GRID)
        _kernels[param.dtype]((blocks,), (THREADS,),
                              (param.data_ptr(), grads.data_ptr(), exp_avg.data_ptr(), exp_avg_sq.data_ptr(), p_out.data_ptr(), m_out.data_ptr(), v_out.data_ptr(), np.int64(n),
                               np.int32(steps), np.int64(step), np.float64(lr), np.float64(beta1), np.float64(beta2),
                               np.float32(eps)),
                              shared_mem=max(8 * steps, 4))
    return p_out, m_out, v_out
