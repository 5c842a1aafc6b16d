// hip_on_cuda.h: the HIP device-side names mkbench's HIP backend supports on NVIDIA GPUs, mapped
// onto CUDA. The loader puts this text in front of a candidate's HIP_SOURCE (its own
// #include <hip/...> lines are blanked) and compiles the result with NVRTC (nvcc on a machine
// without a GPU). It is not HIP: only what docs/backends/hip.md lists is here.
//
// Wavefront width. AMD CDNA GPUs (MI200, MI300) run 64-wide wavefronts, RDNA 32-wide, and NVIDIA
// warps are 32 threads. warpSize is the running device's width (32 here). Width-agnostic code
// loops shuffles from warpSize / 2 down, takes lane = threadIdx.x % warpSize and
// wave = threadIdx.x / warpSize, launches blocks whose size is a multiple of 64, and sizes
// per-wave shared arrays for 32-wide warps (1024 / 32 = 32 slots).
#define __HIP_PLATFORM_NVIDIA__ 1
#define __HIP_PLATFORM_NVCC__ 1
#define MKBENCH_HIP_ON_CUDA 1

// NVRTC has no standard headers; nvcc (the compile-only check) has them.
#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#endif

// --- thread indexing (HIP's older spellings; threadIdx & co. are the same in both) ----------
#define hipThreadIdx_x threadIdx.x
#define hipThreadIdx_y threadIdx.y
#define hipThreadIdx_z threadIdx.z
#define hipBlockIdx_x blockIdx.x
#define hipBlockIdx_y blockIdx.y
#define hipBlockIdx_z blockIdx.z
#define hipBlockDim_x blockDim.x
#define hipBlockDim_y blockDim.y
#define hipBlockDim_z blockDim.z
#define hipGridDim_x gridDim.x
#define hipGridDim_y gridDim.y
#define hipGridDim_z gridDim.z
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE

// --- warp / wavefront functions --------------------------------------------------------------
// HIP's shuffles are unmasked (the whole wavefront takes part); on NVIDIA they become the _sync
// forms with a full mask, so every lane of the warp must reach them (as on AMD). Macros, because
// CUDA still declares deprecated unmasked __shfl* that sm_70+ no longer provides.
template <typename T> __device__ __forceinline__ T mkb_shfl(T v, int src, int width = 32) { return __shfl_sync(0xffffffffu, v, src, width); }
template <typename T> __device__ __forceinline__ T mkb_shfl_up(T v, unsigned int d, int width = 32) { return __shfl_up_sync(0xffffffffu, v, d, width); }
template <typename T> __device__ __forceinline__ T mkb_shfl_down(T v, unsigned int d, int width = 32) { return __shfl_down_sync(0xffffffffu, v, d, width); }
template <typename T> __device__ __forceinline__ T mkb_shfl_xor(T v, int mask, int width = 32) { return __shfl_xor_sync(0xffffffffu, v, mask, width); }
#define __shfl(...) mkb_shfl(__VA_ARGS__)
#define __shfl_up(...) mkb_shfl_up(__VA_ARGS__)
#define __shfl_down(...) mkb_shfl_down(__VA_ARGS__)
#define __shfl_xor(...) mkb_shfl_xor(__VA_ARGS__)
// HIP returns 64-bit lane masks (bits above 31 are 0 on a 32-wide warp).
__device__ __forceinline__ unsigned long long mkb_ballot(int p) { return (unsigned long long)__ballot_sync(0xffffffffu, p); }
__device__ __forceinline__ int mkb_any(int p) { return __any_sync(0xffffffffu, p); }
__device__ __forceinline__ int mkb_all(int p) { return __all_sync(0xffffffffu, p); }
#define __ballot(p) mkb_ballot(p)
#define __any(p) mkb_any(p)
#define __all(p) mkb_all(p)
__device__ __forceinline__ unsigned int __lane_id() { unsigned int l; asm volatile("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }

// --- atomics (atomicAdd, atomicMax, atomicCAS, atomicExch ... are native in both) -----------
#define unsafeAtomicAdd atomicAdd
#define safeAtomicAdd atomicAdd

// --- float16: __half as raw bits, converted with PTX cvt (no cuda_fp16.h: NVRTC may not find it)
struct __half {
    unsigned short __x;
    __half() = default;
    __device__ __half(float f) { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(__x) : "f"(f)); }
    __device__ operator float() const { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(__x)); return f; }
};
__device__ __forceinline__ float __half2float(__half h) { return (float)h; }
__device__ __forceinline__ __half __float2half(float f) { return __half(f); }
__device__ __forceinline__ __half __float2half_rn(float f) { return __half(f); }
__device__ __forceinline__ unsigned short __half_as_ushort(__half h) { return h.__x; }
__device__ __forceinline__ __half __ushort_as_half(unsigned short u) { __half h; h.__x = u; return h; }
__device__ __forceinline__ __half __hadd(__half a, __half b) { return __half((float)a + (float)b); }
__device__ __forceinline__ __half __hsub(__half a, __half b) { return __half((float)a - (float)b); }
__device__ __forceinline__ __half __hmul(__half a, __half b) { return __half((float)a * (float)b); }
__device__ __forceinline__ __half __hdiv(__half a, __half b) { return __half((float)a / (float)b); }
__device__ __forceinline__ __half __hneg(__half a) { __half h; h.__x = (unsigned short)(a.__x ^ 0x8000u); return h; }
typedef __half half;

// --- bfloat16: hip_bfloat16 (hip_bfloat16.h) and __hip_bfloat16 (hip_bf16.h), raw bits --------
__device__ __forceinline__ unsigned short mkb_f32_to_bf16_bits(float f) {
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // NaN stays NaN
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);                  // nearest even
}
struct hip_bfloat16 {
    unsigned short data;
    hip_bfloat16() = default;
    __device__ hip_bfloat16(float f) : data(mkb_f32_to_bf16_bits(f)) {}
    __device__ operator float() const { return __uint_as_float(((unsigned int)data) << 16); }
};
struct __hip_bfloat16 {
    unsigned short data;
    __hip_bfloat16() = default;
    __device__ __hip_bfloat16(float f) : data(mkb_f32_to_bf16_bits(f)) {}
    __device__ operator float() const { return __uint_as_float(((unsigned int)data) << 16); }
};
__device__ __forceinline__ float __bfloat162float(__hip_bfloat16 b) { return (float)b; }
__device__ __forceinline__ __hip_bfloat16 __float2bfloat16(float f) { return __hip_bfloat16(f); }

// --- math ------------------------------------------------------------------------------------
// expf, logf, erff, sqrtf, rsqrtf, fmaf, fmaxf, rintf, __expf, __fdividef, __popc, __clz,
// __ffs (and the ll forms) are CUDA device functions of the same names. HIP's __fdiv_rn etc.
// are not in HIP 5.2; plain '/' and sqrtf are correctly rounded in both (no fast-math).
