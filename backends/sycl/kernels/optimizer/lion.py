"""Several fused Lion steps per element (Chen et al. 2023, with decoupled weight decay): c = beta1 m
+ (1 - beta1) g, param = param (1 - lr wd) - lr sign(c), m = beta2 m + (1 - beta2) g. One element
per work-item, the state kept in float registers across the steps and rounded once; OpenCL's sign
gives 0 for a zero c, as torch's sign_ does."""

import numpy as np
import pyopencl.array as cla

OPENCL_SOURCE = r"""
// Storage types: dt 0 = float, 1 = half (IEEE binary16 through vload_half / vstore_half, which need
// no cl_khr_fp16), 2 = bfloat16 as raw ushort bits. Arithmetic is always float.
inline float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

inline ushort float_to_bf16(float f) {
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);  // NaN stays NaN
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);                   // round to nearest even
}

inline float load_elem(__global const uchar *p, size_t i, int dt) {
    if (dt == 0) return ((__global const float *)p)[i];
    if (dt == 1) return vload_half(i, (__global const half *)p);
    return bf16_to_float(((__global const ushort *)p)[i]);
}

inline void store_elem(__global uchar *p, size_t i, float v, int dt) {
    if (dt == 0) ((__global float *)p)[i] = v;
    else if (dt == 1) vstore_half_rte(v, i, (__global half *)p);
    else ((__global ushort *)p)[i] = float_to_bf16(v);
}
__kernel void lion_steps(__global const uchar *param, __global const uchar *grads, __global const uchar *m_in,
                         __global uchar *p_out, __global uchar *m_out, const int steps, const long n, const float lr,
                         const float decay, const float beta1, const float beta2, const int dt) {
    const size_t i = get_global_id(0);
    if (i >= (size_t)n) return;
    float p = load_elem(param, i, dt), m = load_elem(m_in, i, dt);
    for (int k = 0; k < steps; k++) {
        const float g = load_elem(grads, (size_t)k * n + i, dt);
        const float c = beta1 * m + (1.0f - beta1) * g;
        p = p * decay - lr * sign(c);
        m = beta2 * m + (1.0f - beta2) * g;
    }
    store_elem(p_out, i, p, dt);
    store_elem(m_out, i, m, dt);
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, param, grads, exp_avg, lr, beta1, beta2, weight_decay):
    n = param.size
    p_out, m_out = cla.empty_like(param), cla.empty_like(exp_avg)
    if n:
        prog.lion_steps(queue, (-(-n // WG) * WG,), (WG,), param.data, grads.data, exp_avg.data, p_out.data,
                        m_out.data, np.int32(grads.shape[0]), np.int64(n), np.float32(lr),
                        np.float32(1.0 - lr * weight_decay), np.float32(beta1), np.float32(beta2),
                        np.int32(DTYPE_CODE[param.dtype]))
    return p_out, m_out
