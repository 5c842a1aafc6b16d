"""Layout transpose NCHW -> NHWC, i.e. per image a [C, H W] -> [H W, C] matrix transpose, copied as
raw bits (exact for every dtype). A 32x8 work-group moves a 32x32 tile through local memory: it
reads 32 consecutive pixels of 32 channels (coalesced), and writes 32 consecutive channels of 32
pixels (coalesced), the tile padded by one column so the transposed reads hit distinct banks. One
kernel per element size (4-byte and 2-byte)."""

import numpy as np
import pyopencl.array as cla

OPENCL_SOURCE = r"""
#define TILE 32
#define ROWS 8

#define NCHW_TO_NHWC(NAME, T)                                                                      \
__kernel __attribute__((reqd_work_group_size(TILE, ROWS, 1)))                                      \
void NAME(__global const T *x, __global T *y, const int C, const int HW) {                         \
    __local T tile[TILE][TILE + 1];                                                                \
    const int tx = get_local_id(0), ty = get_local_id(1);                                          \
    const int p0 = get_group_id(0) * TILE, c0 = get_group_id(1) * TILE;                            \
    const size_t base = get_group_id(2) * (size_t)C * HW;                                          \
    for (int k = ty; k < TILE; k += ROWS) {                                                        \
        const int c = c0 + k, p = p0 + tx;                                                         \
        if (c < C && p < HW) tile[k][tx] = x[base + (size_t)c * HW + p];                            \
    }                                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    for (int k = ty; k < TILE; k += ROWS) {                                                        \
        const int p = p0 + k, c = c0 + tx;                                                         \
        if (c < C && p < HW) y[base + (size_t)p * C + c] = tile[tx][k];                            \
    }                                                                                              \
}

NCHW_TO_NHWC(nchw_to_nhwc_u32, uint)
NCHW_TO_NHWC(nchw_to_nhwc_u16, ushort)
"""

TILE, ROWS = 32, 8


def kernel_function(prog, queue, x):
    n, c, h, w = x.shape
    y = cla.empty(queue, (n, h, w, c), x.dtype)
    if y.size:
        kernel = prog.nchw_to_nhwc_u32 if x.dtype.itemsize == 4 else prog.nchw_to_nhwc_u16
        gsize = (-(-(h * w) // TILE) * TILE, -(-c // TILE) * ROWS, n)
        kernel(queue, gsize, (TILE, ROWS, 1), x.data, y.data, np.int32(c), np.int32(h * w))
    return y
