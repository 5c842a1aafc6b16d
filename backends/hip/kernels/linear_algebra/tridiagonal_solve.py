"""Batched tridiagonal solve T x = b by the Thomas algorithm, one system per thread, in the input
dtype (float32 or float64): forward elimination storing c' in a scratch buffer and y' in x, then
back substitution in place. dl[:, 0] and du[:, n-1] lie outside the matrix and are never used.
Each block of SYS threads stages chunks of its systems' rows through shared memory, so every
global access is a coalesced row segment although each thread walks its own row sequentially."""

import numpy as np
import torch

from mkbench.backends.hip import load_module

HIP_SOURCE = r"""
#include <hip/hip_runtime.h>

#define SYS 32  // systems per block, one per thread
#define CH 32   // unknowns per staged chunk

// Thomas algorithm, one system per thread, in the input dtype (float32 or float64; the inputs are
// diagonally dominant, so no pivoting). The sweeps are sequential along a system, which in memory is
// a row: a thread walking its own row would read with a stride of n between lanes. So the block
// stages CH unknowns of each of its SYS systems through shared memory with coalesced row reads
// (lane t reads unknown i0 + t of system r), each thread then sweeps its own row of the tile, and
// the results go back out the same way. Forward: c'_i = du_i / (d_i - dl_i c'_{i-1}) and
// y'_i = (b_i - dl_i y'_{i-1}) / (same), with dl[:, 0] and du[:, n-1] (outside the matrix) read as 0;
// c' goes to a scratch row, y' to x. Backward: x_i = y'_i - c'_i x_{i+1}, in place in x.
template <typename T>
__device__ __forceinline__ void thomas(const T* __restrict__ dl, const T* __restrict__ d, const T* __restrict__ du, const T* __restrict__ b,
                                       T* __restrict__ cbuf, T* __restrict__ x, long long B, int n) {
    __shared__ T s_dl[SYS][CH + 1], s_d[SYS][CH + 1], s_du[SYS][CH + 1], s_b[SYS][CH + 1];  // + 1: no bank conflicts
    const int t = threadIdx.x;
    for (long long s0 = (long long)blockIdx.x * SYS; s0 < B; s0 += (long long)gridDim.x * SYS) {
        const bool mine = s0 + t < B;
        T c_prev = T(0), y_prev = T(0);
        for (int i0 = 0; i0 < n; i0 += CH) {
            const int len = min(CH, n - i0);
            for (int r = 0; r < SYS && s0 + r < B; ++r) {
                if (t < len) {
                    const long long o = (s0 + r) * n + i0 + t;
                    s_dl[r][t] = dl[o]; s_d[r][t] = d[o]; s_du[r][t] = du[o]; s_b[r][t] = b[o];
                }
            }
            __syncthreads();
            if (mine) {
                for (int k = 0; k < len; ++k) {
                    const int i = i0 + k;
                    const T a = i > 0 ? s_dl[t][k] : T(0);
                    const T cu = i < n - 1 ? s_du[t][k] : T(0);
                    const T inv = T(1) / (s_d[t][k] - a * c_prev);
                    c_prev = cu * inv;
                    y_prev = (s_b[t][k] - a * y_prev) * inv;
                    s_du[t][k] = c_prev;
                    s_b[t][k] = y_prev;
                }
            }
            __syncthreads();
            for (int r = 0; r < SYS && s0 + r < B; ++r) {
                if (t < len) {
                    const long long o = (s0 + r) * n + i0 + t;
                    cbuf[o] = s_du[r][t];
                    x[o] = s_b[r][t];
                }
            }
            __syncthreads();
        }
        T x_next = T(0);
        for (int i0 = ((n - 1) / CH) * CH; i0 >= 0; i0 -= CH) {
            const int len = min(CH, n - i0);
            for (int r = 0; r < SYS && s0 + r < B; ++r) {
                if (t < len) {
                    const long long o = (s0 + r) * n + i0 + t;
                    s_du[r][t] = cbuf[o];  // written by this block in the forward sweep: visible after its barriers
                    s_b[r][t] = x[o];
                }
            }
            __syncthreads();
            if (mine) {
                for (int k = len - 1; k >= 0; --k) {
                    x_next = s_b[t][k] - s_du[t][k] * x_next;
                    s_b[t][k] = x_next;
                }
            }
            __syncthreads();
            for (int r = 0; r < SYS && s0 + r < B; ++r)
                if (t < len) x[(s0 + r) * n + i0 + t] = s_b[r][t];
            __syncthreads();
        }
    }
}

extern "C" __global__ void __launch_bounds__(SYS) thomas_f32(const float* dl, const float* d, const float* du, const float* b, float* cbuf,
                                                            float* x, long long B, int n) {
    thomas(dl, d, du, b, cbuf, x, B, n);
}
extern "C" __global__ void __launch_bounds__(SYS) thomas_f64(const double* dl, const double* d, const double* du, const double* b,
                                                            double* cbuf, double* x, long long B, int n) {
    thomas(dl, d, du, b, cbuf, x, B, n);
}
"""

_module = load_module(HIP_SOURCE)

SYS = 32
MAX_GRID = 2**31 - 1
_kernels = {torch.float32: _module.get_function("thomas_f32"), torch.float64: _module.get_function("thomas_f64")}


def kernel_function(dl, d, du, b):
    dl, d, du, b = dl.contiguous(), d.contiguous(), du.contiguous(), b.contiguous()
    B, n = d.shape
    x = torch.empty_like(b)
    if B and n:
        scratch = torch.empty_like(d)
        _kernels[d.dtype]((min((B + SYS - 1) // SYS, MAX_GRID),), (SYS,), (dl, d, du, b,
                                                                        scratch, x, np.int64(B), np.int32(n)))
    return x
