"""hypot(x, y) for every dtype: float16 and bfloat16 widen exactly to float32 (their whole range,
subnormals included, is inside float32's), whose bits are decoded into float64 with integer
operations, where sqrt(x^2 + y^2) neither overflows nor underflows; the float64 result is encoded
back to float32 the same way (subnormal results kept), then rounded to the output dtype. hypotf
read subnormal inputs as zero on an H100 (reports/2026-11-28-calls/hypot_probe.py). IEEE
special cases: an infinite argument gives +inf even with a NaN beside it; otherwise NaN
propagates. Memory-bound: PER_THREAD coalesced elements per thread, loads in flight together."""

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

// hypot in float64 from the float32 bits, decoded and encoded with integer operations only: on an H100
// this build's float32 instructions, conversions included, flushed subnormal operands to zero whatever
// the --ftz option (reports/2026-11-28-calls/hypot_probe.py: hypotf(1e-39, 1e-39) gave 0), while
// float64 ones never flush. In float64 neither x^2 overflows nor underflows for any float32 x.
__device__ __forceinline__ double f64_of_bits(float v) {
    const unsigned u = __float_as_uint(v);
    const unsigned e = (u >> 23) & 0xffu, m = u & 0x7fffffu;
    double mag;
    if (e == 0u) mag = (double)m * __longlong_as_double(874LL << 52);                  // subnormal: m x 2^-149
    else mag = __longlong_as_double(((long long)(e + 896u) << 52) | ((long long)m << 29));  // 896 = 1023 - 127
    return (u >> 31) ? -mag : mag;
}

__device__ __forceinline__ float f32_of_f64(double r) {  // round to nearest even, subnormal results kept
    if (!(fabs(r) < __longlong_as_double(897LL << 52))) return __double2float_rn(r);       // 2^-126: normal, NaN
    const unsigned m = (unsigned)__double2ll_rn(fabs(r) * __longlong_as_double(1172LL << 52));  // x 2^149
    return __uint_as_float(m | (r < 0.0 ? 0x80000000u : 0u));                      // m = 2^23 encodes 2^-126
}

__device__ __forceinline__ float hypot_of(float a, float b) {
    const unsigned inf_bits = 0x7f800000u;
    if ((__float_as_uint(a) & 0x7fffffffu) == inf_bits || (__float_as_uint(b) & 0x7fffffffu) == inf_bits)
        return __uint_as_float(inf_bits);
    if ((__float_as_uint(a) & 0x7fffffffu) > inf_bits || (__float_as_uint(b) & 0x7fffffffu) > inf_bits)
        return __uint_as_float(0x7fc00000u);  // NaN beside a finite value
    const double x = f64_of_bits(a), y = f64_of_bits(b);
    return f32_of_f64(sqrt(x * x + y * y));
}

#define PER_THREAD 4

template <typename T>
__device__ __forceinline__ void hypot(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y, long long n) {
    const long long base = (long long)blockIdx.x * blockDim.x * PER_THREAD + threadIdx.x;
    float va[PER_THREAD], vb[PER_THREAD];
    #pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        const long long i = base + (long long)k * blockDim.x;
        va[k] = i < n ? to_f32(a[i]) : 0.0f;
        vb[k] = i < n ? to_f32(b[i]) : 0.0f;
    }
    #pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        const long long i = base + (long long)k * blockDim.x;
        if (i < n) y[i] = from_f32<T>(hypot_of(va[k], vb[k]));
    }
}

extern "C" __global__ void hypot_f32(const float* a, const float* b, float* y, long long n) { hypot(a, b, y, n); }
extern "C" __global__ void hypot_f16(const f16* a, const f16* b, f16* y, long long n) { hypot(a, b, y, n); }
extern "C" __global__ void hypot_bf16(const bf16* a, const bf16* b, bf16* y, long long n) { hypot(a, b, y, n); }
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

THREADS, PER_THREAD = 256, 4
_kernels = {torch.float32: _module.get_function("hypot_f32"), torch.float16: _module.get_function("hypot_f16"),
            torch.bfloat16: _module.get_function("hypot_bf16")}


def kernel_function(x, y):
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        blocks = (n + THREADS * PER_THREAD - 1) // (THREADS * PER_THREAD)
        _kernels[x.dtype]((blocks,), (THREADS,), (x.data_ptr(), y.data_ptr(), out.data_ptr(), np.int64(n)))
    return out
