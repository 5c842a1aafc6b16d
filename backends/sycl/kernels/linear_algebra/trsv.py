import numpy as np
import pyopencl as cl
import pyopencl.array as cla

OPENCL_SOURCE = r"""
// Batched forward substitution L x = b, one work-group per system, column-oriented: work-item t
// owns rows t, t + WG, ...; acc[r] holds b[r] minus the terms already known. At step i the owner of
// row i divides by the diagonal; after one barrier every owner of a row r > i subtracts
// L[r, i] * x[i]. One barrier per row, and only the lower triangle (diagonal included) is read.
#define WG 128

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void trsv_lower(__global const float *L, __global const float *b, __global float *x, const int N,
                __local float *acc, __local float *xs) {
    const int lid = get_local_id(0);
    const size_t sys = get_group_id(0);
    __global const float *A = L + sys * (size_t)N * N;
    for (int r = lid; r < N; r += WG) acc[r] = b[sys * N + r];
    for (int i = 0; i < N; i++) {
        if (i % WG == lid) xs[i] = acc[i] / A[(size_t)i * N + i];
        barrier(CLK_LOCAL_MEM_FENCE);
        const float xi = xs[i];
        for (int r = lid; r < N; r += WG)
            if (r > i) acc[r] -= A[(size_t)r * N + i] * xi;
    }
    for (int r = lid; r < N; r += WG) x[sys * N + r] = xs[r];
}
"""

WG = 128


def kernel_function(prog, queue, L, b):
    batch, n = b.shape
    x = cla.empty_like(b)
    if batch and n:
        prog.trsv_lower(queue, (batch * WG,), (WG,), L.data, b.data, x.data, np.int32(n),
                        cl.LocalMemory(4 * n), cl.LocalMemory(4 * n))
    return x
