"""pixel_shuffle, out[n, c, h r + i, w r + j] = x[n, c r^2 + i r + j, h, w]. Block (32, 8): lanes
walk an output row (coalesced writes; each read comes from one of r input planes, a stride-1
walk in each), threadIdx.y and the grid's y dimension pick the output row (n c, h r + i), whose
input row is found once. Values are moved as raw bits (unsigned integers of the element's width): a copy is exact for every dtype, NaN payloads included."""

import numpy as np
import torch

from mkbench.backends.hip import load_module

HIP_SOURCE = r"""
#include <hip/hip_runtime.h>

// Block (32, 8): lanes walk a row's columns, threadIdx.y picks the row; both grid-stride.
#define FOR_ROWS(row, rows) \
    for (long long row = (long long)blockIdx.y * blockDim.y + threadIdx.y; row < (rows); row += (long long)gridDim.y * blockDim.y)
#define FOR_COLS(col, cols) \
    for (long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x; col < (cols); col += (long long)gridDim.x * blockDim.x)

template <typename E>
__device__ __forceinline__ void pixel_shuffle(const E* __restrict__ x, E* __restrict__ out, long long rows, int H, int W, int r) {
    const int Ho = H * r, Wo = W * r;
    FOR_ROWS(row, rows) {  // row = (n C + c) Ho + oh
        const long long nc = row / Ho;
        const int oh = (int)(row - nc * Ho), h = oh / r, i = oh - h * r;
        const E* src = x + ((nc * r + i) * r * (long long)H + h) * W;  // plane nc r^2 + i r, row h; + j H W per j
        E* dst = out + row * Wo;
        FOR_COLS(ow, Wo) {
            const int w = (int)ow / r, j = (int)ow - w * r;
            dst[ow] = src[(long long)j * H * W + w];
        }
    }
}

extern "C" __global__ void pixel_shuffle_b32(const unsigned* x, unsigned* out, long long rows, int H, int W, int r) {
    pixel_shuffle(x, out, rows, H, W, r);
}
extern "C" __global__ void pixel_shuffle_b16(const unsigned short* x, unsigned short* out, long long rows, int H, int W, int r) {
    pixel_shuffle(x, out, rows, H, W, r);
}
"""

_module = load_module(HIP_SOURCE)

BLOCK = (32, 8)  # 32 lanes along a row, 8 rows per block
MAX_GRID_Y = 65535


def _grid(rows, cols):
    return ((cols + 127) // 128, min((rows + 7) // 8, MAX_GRID_Y))


_kernels = {4: _module.get_function("pixel_shuffle_b32"), 2: _module.get_function("pixel_shuffle_b16")}


def kernel_function(x, r):
    x = x.contiguous()
    N, Cr2, H, W = x.shape
    C = Cr2 // (r * r)
    out = torch.empty((N, C, H * r, W * r), dtype=x.dtype, device=x.device)
    rows = N * C * H * r
    if rows and W:
        _kernels[x.element_size()](_grid(rows, W * r), BLOCK, (x, out, np.int64(rows), np.int32(H),
                                                               np.int32(W), np.int32(r)))
    return out
