"""EmbeddingBag(mode="sum") with include_last_offset offsets: out[b] = sum of weight rows
indices[offsets[b]:offsets[b + 1]], float32 accumulation for every dtype; an empty (or reversed)
range gives a zero row. One warp (wavefront) per bag: indices are fetched a warp at a time and
broadcast by shuffle, and the lanes read each looked-up row coalesced, VEC columns per lane, with
several rows in flight (the loop over a bag's rows is unrolled)."""

import numpy as np
import torch

from mkbench.backends.hip import load_module

HIP_SOURCE = r"""
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

// bfloat16 travels as raw bits with explicit round-to-nearest-even (the same code on every HIP
// version, hipcc or hiprtc, and on the HIP-on-CUDA mapping); float16 is HIP's __half.
struct bf16 { unsigned short bits; };
typedef __half f16;
__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(bf16 v) { return __uint_as_float(((unsigned)v.bits) << 16); }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half(v); }
template <> __device__ __forceinline__ bf16 from_f32<bf16>(float v) {
    unsigned u = __float_as_uint(v);
    bf16 r;
    r.bits = (u & 0x7fffffffu) > 0x7f800000u ? (unsigned short)((u >> 16) | 0x40u)                 // NaN stays NaN
                                             : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // nearest even
    return r;
}

#define VEC 4  // columns per lane per chunk: a chunk is 4 x warpSize columns

// One wavefront per bag (warpSize-agnostic: 64 lanes on CDNA, 32 on NVIDIA). The bag's indices
// are read warpSize at a time (one per lane) and broadcast with a shuffle; each lane accumulates
// VEC columns, warpSize apart (every row read is coalesced), in float32.
template <typename T>
__device__ __forceinline__ void embedding_bag_sum(const T* __restrict__ w, const long long* __restrict__ indices,
                                                  const long long* __restrict__ offsets, T* __restrict__ out, long long bags, long long D) {
    const int lane = threadIdx.x % warpSize, width = warpSize;
    const long long waves = (long long)gridDim.x * (blockDim.x / width);
    for (long long bag = (long long)blockIdx.x * (blockDim.x / width) + threadIdx.x / width; bag < bags; bag += waves) {
        const long long start = offsets[bag], end = offsets[bag + 1];  // end <= start: an empty bag, zeros
        for (long long d0 = lane; d0 < D; d0 += (long long)VEC * width) {
            float acc[VEC] = {};
            for (long long j0 = start; j0 < end; j0 += width) {
                const long long mine = j0 + lane < end ? indices[j0 + lane] : 0;
                const int count = (int)min((long long)width, end - j0);
                #pragma unroll 4
                for (int t = 0; t < count; ++t) {
                    const T* wr = w + __shfl(mine, t) * D + d0;
                    #pragma unroll
                    for (int v = 0; v < VEC; ++v)
                        if (d0 + (long long)width * v < D) acc[v] += to_f32(wr[(long long)width * v]);
                }
            }
            #pragma unroll
            for (int v = 0; v < VEC; ++v)
                if (d0 + (long long)width * v < D) out[bag * D + d0 + (long long)width * v] = from_f32<T>(acc[v]);
        }
    }
}

extern "C" __global__ void embedding_bag_sum_f32(const float* w, const long long* indices, const long long* offsets, float* out,
                                                 long long bags, long long D) {
    embedding_bag_sum(w, indices, offsets, out, bags, D);
}
extern "C" __global__ void embedding_bag_sum_bf16(const bf16* w, const long long* indices, const long long* offsets, bf16* out,
                                                  long long bags, long long D) {
    embedding_bag_sum(w, indices, offsets, out, bags, D);
}
"""

_module = load_module(HIP_SOURCE)

THREADS = 256
MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("embedding_bag_sum_f32"), torch.bfloat16: _module.get_function("embedding_bag_sum_bf16")}


def kernel_function(weight, indices, offsets):
    weight, indices, offsets = weight.contiguous(), indices.contiguous(), offsets.contiguous()
    bags, D = offsets.numel() - 1, weight.shape[1]
    out = torch.empty((max(bags, 0), D), dtype=weight.dtype, device=weight.device)
    if bags > 0 and D:
        blocks = min((bags * 64 + THREADS - 1) // THREADS, MAX_GRID)  # a wavefront per bag at 64 lanes (32 on NVIDIA: half idle)
        _kernels[weight.dtype]((blocks,), (THREADS,), (weight, indices, offsets, out,
                                                       np.int64(bags), np.int64(D)))
    return out
