"""Batched lower-triangular solve L x = b by forward substitution, float32. One warp (wavefront)
per system: for row i the lanes read L[i, :i] coalesced, multiply by the x computed so far and
reduce with shuffles; x[i] = (b[i] - dot) / L[i, i]. Lane j % width is the only lane that ever
reads or writes x[j] (kept in shared memory), so no barrier is needed between rows. Only the lower
triangle (diagonal included) is read."""

import cupy
import numpy as np
import torch

CUDA_SOURCE = r"""
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

#define WARP_WIDTH 32
// blockDim.x is a multiple of the warp width; the dynamic shared memory holds one row of N floats
// for each warp of the narrowest width (32), enough for any width.
extern "C" __global__ void trsv_lower_f32(const float* __restrict__ L, const float* __restrict__ b, float* __restrict__ x,
                                          long long B, int N) {
    extern __shared__ float x_all[];
    const int width = WARP_WIDTH;
    const int lane = threadIdx.x % width, warp = threadIdx.x / width, per_block = blockDim.x / width;
    float* xs = x_all + (long long)warp * N;
    for (long long s = (long long)blockIdx.x * per_block + warp; s < B; s += (long long)gridDim.x * per_block) {
        const float* Ls = L + s * N * N;
        const float* bs = b + s * N;
        for (int i = 0; i < N; ++i) {
            const float* row = Ls + (long long)i * N;
            float acc = 0.0f;
            for (int j = lane; j < i; j += width) acc = fmaf(row[j], xs[j], acc);
            acc = warp_sum(acc);  // every lane holds the dot product
            const float xi = (bs[i] - acc) / row[i];
            if (i % width == lane) xs[i] = xi;
        }
        for (int j = lane; j < N; j += width) x[s * N + j] = xs[j];
    }
}
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

MAX_SHARED = 48 * 1024  # bytes of dynamic shared memory available without an opt-in
_kernel = _module.get_function("trsv_lower_f32")


def kernel_function(L, b):
    L, b = L.contiguous(), b.contiguous()
    B, N = b.shape
    x = torch.empty_like(b)
    if B == 0 or N == 0:
        return x
    # 64 to 256 threads (a multiple of AMD's 64-wide wavefront); shared memory sized for 32-wide warps.
    threads = 256
    while threads > 64 and (threads // 32) * N * 4 > MAX_SHARED:
        threads //= 2
    shared = (threads // 32) * N * 4
    if shared > MAX_SHARED:
        raise ValueError(f"trsv: N = {N} is too large for this kernel (at most {MAX_SHARED // 8})")
    blocks = (B + threads // 32 - 1) // (threads // 32)
    _kernel((blocks,), (threads,), (L.data_ptr(), b.data_ptr(), x.data_ptr(), np.int64(B), np.int32(N)), shared_mem=shared)
    return x
