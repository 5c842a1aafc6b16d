"""Batched tridiagonal solve T x = b by the Thomas algorithm (no pivoting: the systems are
diagonally dominant), one work-item per system. A work-item walking its own row alone would read
memory with a stride of n elements across the group; instead the 32 systems of a work-group move
through local memory in 32 x 32 chunks: each chunk of dl, d, du, b is read with coalesced loads
(32 neighbouring columns of one system per step), every work-item sweeps its system's 32 columns
there, and the forward sweep's c' and d' leave the same way, c' into a scratch buffer and d' into
x, which the backward sweep then overwrites chunk by chunk from the end. dl[:, 0] and du[:, n-1]
lie outside the matrix and are never read. One kernel per precision (float32, float64)."""

import numpy as np
import pyopencl.array as cla

OPENCL_SOURCE = r"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define SYS 32  // systems per work-group, one per work-item
#define CH 32   // columns per chunk

#define THOMAS(NAME, T)                                                                            \
__kernel __attribute__((reqd_work_group_size(SYS, 1, 1)))                                          \
void NAME(__global const T *dl, __global const T *d, __global const T *du, __global const T *b,    \
          __global T *x, __global T *cp, const int B, const int n) {                               \
    __local T tl[SYS][CH + 1], td[SYS][CH + 1], tu[SYS][CH + 1], tb[SYS][CH + 1];                  \
    const int lid = get_local_id(0);                                                               \
    const int s0 = get_group_id(0) * SYS;                                                          \
    const int mine = s0 + lid < B;                                                                 \
    T c_prev = 0, d_prev = 0;                                                                      \
    for (int c0 = 0; c0 < n; c0 += CH) {                                                           \
        for (int e = lid; e < SYS * CH; e += SYS) {                                                \
            const int r = e / CH, k = e % CH;                                                      \
            if (s0 + r < B && c0 + k < n) {                                                        \
                const size_t i = (size_t)(s0 + r) * n + c0 + k;                                    \
                tl[r][k] = dl[i]; td[r][k] = d[i]; tu[r][k] = du[i]; tb[r][k] = b[i];              \
            }                                                                                      \
        }                                                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        if (mine) {                                                                                \
            for (int k = 0; k < CH && c0 + k < n; k++) {                                           \
                const int i = c0 + k;                                                              \
                const T a = i > 0 ? tl[lid][k] : (T)0;                                             \
                const T den = td[lid][k] - a * c_prev;                                             \
                c_prev = i < n - 1 ? tu[lid][k] / den : (T)0;                                      \
                d_prev = (tb[lid][k] - a * d_prev) / den;                                          \
                tu[lid][k] = c_prev; tb[lid][k] = d_prev;                                          \
            }                                                                                      \
        }                                                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        for (int e = lid; e < SYS * CH; e += SYS) {                                                \
            const int r = e / CH, k = e % CH;                                                      \
            if (s0 + r < B && c0 + k < n) {                                                        \
                const size_t i = (size_t)(s0 + r) * n + c0 + k;                                   \
                cp[i] = tu[r][k]; x[i] = tb[r][k];                                                 \
            }                                                                                      \
        }                                                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
    }                                                                                              \
    T x_next = 0;                                                                                  \
    for (int c0 = ((n - 1) / CH) * CH; c0 >= 0; c0 -= CH) {                                        \
        for (int e = lid; e < SYS * CH; e += SYS) {                                                \
            const int r = e / CH, k = e % CH;                                                      \
            if (s0 + r < B && c0 + k < n) {                                                        \
                const size_t i = (size_t)(s0 + r) * n + c0 + k;                                    \
                tu[r][k] = cp[i]; tb[r][k] = x[i];                                                 \
            }                                                                                      \
        }                                                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        if (mine) {                                                                                \
            for (int k = min(CH, n - c0) - 1; k >= 0; k--) {                                       \
                x_next = tb[lid][k] - tu[lid][k] * x_next;                                         \
                tb[lid][k] = x_next;                                                               \
            }                                                                                      \
        }                                                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        for (int e = lid; e < SYS * CH; e += SYS) {                                                \
            const int r = e / CH, k = e % CH;                                                      \
            if (s0 + r < B && c0 + k < n) x[(size_t)(s0 + r) * n + c0 + k] = tb[r][k];             \
        }                                                                                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
    }                                                                                              \
}

THOMAS(thomas_f32, float)
THOMAS(thomas_f64, double)
"""

SYS = 32


def kernel_function(prog, queue, dl, d, du, b):
    batch, n = d.shape
    x = cla.empty_like(d)
    if x.size:
        c_prime = cla.empty_like(d)  # the forward sweep's c', read back by the backward sweep
        kernel = prog.thomas_f64 if d.dtype == np.float64 else prog.thomas_f32
        kernel(queue, (-(-batch // SYS) * SYS,), (SYS,), dl.data, d.data, du.data, b.data, x.data, c_prime.data,
               np.int32(batch), np.int32(n))
    return x
