"""torch.max(x, dim=-1): the row maximum and the int64 index of its first occurrence. One block per
row: each thread scans a strided, coalesced slice keeping (value, index) with a strict >, so its
own candidate is the first of its maxima; candidates merge with shuffles within warps and through
shared memory across them under the same rule (larger value, else smaller index; NaN wins, as in
torch). Values are compared in float32, exact for every dtype, so the returned value is an input."""

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

// (value, index) of a row's maximum: the larger value wins, a NaN beats every number (torch.max
// propagates NaN), and between equals (or two NaNs) the smaller index wins: torch's first maximum.
__device__ __forceinline__ bool beats(float v, long long i, float w, long long j) {
    const bool vn = v != v, wn = w != w;
    if (vn || wn) return vn && (!wn || i < j);
    return v > w || (v == w && i < j);
}

// Every thread gets the block's winner. blockDim.x: a multiple of 32, at most 1024.
__device__ __forceinline__ void block_argmax(float& v, long long& i) {
    __shared__ float pv[32];
    __shared__ long long pi[32];
    #pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float w = __shfl_xor_sync(0xffffffffu, v, o);
        const long long j = __shfl_xor_sync(0xffffffffu, i, o);
        if (beats(w, j, v, i)) { v = w; i = j; }
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { pv[warp] = v; pi[warp] = i; }
    __syncthreads();
    v = pv[0];
    i = pi[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); ++w)
        if (beats(pv[w], pi[w], v, i)) { v = pv[w]; i = pi[w]; }
    __syncthreads();  // pv, pi are reused by the next row
}

template <typename T>
__device__ __forceinline__ void argmax_rows(const T* __restrict__ x, T* __restrict__ values, long long* __restrict__ indices,
                                            long long R, int C) {
    for (long long row = blockIdx.x; row < R; row += gridDim.x) {
        const T* xr = x + row * C;
        float v = -__int_as_float(0x7f800000);
        long long i = C;  // no candidate yet: loses every tie
        for (int c = threadIdx.x; c < C; c += blockDim.x) {
            const float w = to_f32(xr[c]);
            if (beats(w, c, v, i)) { v = w; i = c; }
        }
        block_argmax(v, i);
        if (threadIdx.x == 0) { values[row] = from_f32<T>(v); indices[row] = i; }
    }
}

extern "C" __global__ void argmax_f32(const float* x, float* values, long long* indices, long long R, int C) {
    argmax_rows(x, values, indices, R, C);
}
extern "C" __global__ void argmax_bf16(const bf16* x, bf16* values, long long* indices, long long R, int C) {
    argmax_rows(x, values, indices, R, C);
}
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("argmax_f32"), torch.bfloat16: _module.get_function("argmax_bf16")}


def _threads(cols):
    return 512 if cols >= 4096 else 256



def kernel_function(x):
    x = x.contiguous()
    C = x.shape[-1]
    R = x.numel() // C if C else 0
    values = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
    indices = torch.empty(x.shape[:-1], dtype=torch.int64, device=x.device)
    if R and C:
        _kernels[x.dtype]((min(R, MAX_GRID),), (_threads(C),), (x.data_ptr(), values.data_ptr(), indices.data_ptr(), np.int64(R),
                                                                 np.int32(C)))
    return values, indices
