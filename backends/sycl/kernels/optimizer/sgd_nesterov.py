"""Several fused SGD steps with Nesterov momentum and L2 weight decay (torch.optim.SGD, nesterov=True,
dampening 0) per element: g += wd p; buf = momentum buf + g; p -= lr (g + momentum buf). One
element per work-item, the state kept in float registers across the steps and rounded once."""

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
__kernel void sgd_nesterov_steps(__global const uchar *param, __global const uchar *grads, __global const uchar *buf_in,
                                 __global uchar *p_out, __global uchar *buf_out, const int steps, const long n,
                                 const float lr, const float momentum, const float weight_decay, const int dt) {
    const size_t i = get_global_id(0);
    if (i >= (size_t)n) return;
    float p = load_elem(param, i, dt), buf = load_elem(buf_in, i, dt);
    for (int k = 0; k < steps; k++) {
        const float g = fma(weight_decay, p, load_elem(grads, (size_t)k * n + i, dt));
        buf = fma(momentum, buf, g);
        p -= lr * fma(momentum, buf, g);
    }
    store_elem(p_out, i, p, dt);
    store_elem(buf_out, i, buf, dt);
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, param, grads, momentum_buffer, lr, momentum, weight_decay):
    n = param.size
    p_out, buf_out = cla.empty_like(param), cla.empty_like(momentum_buffer)
    if n:
        prog.sgd_nesterov_steps(queue, (-(-n // WG) * WG,), (WG,), param.data, grads.data, momentum_buffer.data,
                                p_out.data, buf_out.data, np.int32(grads.shape[0]), np.int64(n), np.float32(lr),
                                np.float32(momentum), np.float32(weight_decay), np.int32(DTYPE_CODE[param.dtype]))
    return p_out, buf_out
