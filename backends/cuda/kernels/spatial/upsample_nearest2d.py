"""2x nearest-neighbour upsampling of NCHW, out[..., i, j] = x[..., i // 2, j // 2]. One thread per
input element (coalesced reads, a 64-bit division by W to find its row): it writes its 2 x 2 output
block as two pair stores (adjacent columns 2j, 2j + 1 in one 8- or 4-byte store). Values are moved as raw bits (unsigned integers of the element's width): a copy is exact for every dtype, NaN payloads included."""

import cupy
import numpy as np
import torch

CUDA_SOURCE = r"""
template <typename E> struct alignas(2 * sizeof(E)) Pair { E a, b; };

template <typename E>
__device__ __forceinline__ void upsample2x(const E* __restrict__ x, E* __restrict__ out, long long n, long long W) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const long long row = i / W, col = i - row * W;  // row runs over N * C * H input rows
        const E v = x[i];
        const Pair<E> p = {v, v};
        Pair<E>* top = reinterpret_cast<Pair<E>*>(out + (2 * row) * (2 * W)) + col;
        top[0] = p;
        top[W] = p;  // the next output row, 2W elements = W pairs further
    }
}

extern "C" __global__ void upsample2x_b32(const unsigned* x, unsigned* out, long long n, long long W) { upsample2x(x, out, n, W); }
extern "C" __global__ void upsample2x_b16(const unsigned short* x, unsigned short* out, long long n, long long W) {
    upsample2x(x, out, n, W);
}
"""

_module = cupy.RawModule(code=CUDA_SOURCE, options=("--std=c++17",))

THREADS = 256
MAX_GRID = 2**31 - 1
_kernels = {4: _module.get_function("upsample2x_b32"), 2: _module.get_function("upsample2x_b16")}


def kernel_function(x):
    x = x.contiguous()
    N, C, H, W = x.shape
    out = torch.empty((N, C, 2 * H, 2 * W), dtype=x.dtype, device=x.device)
    n = x.numel()
    if n:
        _kernels[x.element_size()]((min((n + THREADS - 1) // THREADS, MAX_GRID),), (THREADS,),
                                   (x.data_ptr(), out.data_ptr(), np.int64(n), np.int64(W)))
    return out
