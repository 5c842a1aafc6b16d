"""Several fused AdamW steps (torch.optim.AdamW: decoupled weight decay, amsgrad off) per element,
one element per work-item: the state stays in float registers across the steps and is rounded to
the storage type once at the end, so the three steps cost one read and one write of each tensor.
coef[2k] = lr / (1 - beta1^t) and coef[2k + 1] = 1 / sqrt(1 - beta2^t) for step k (t = step + 1 +
k) are computed on the host in double, like torch's Python-side bias corrections."""

import math

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
__kernel void adamw_steps(__global const uchar *param, __global const uchar *grads, __global const uchar *m_in,
                          __global const uchar *v_in, __global uchar *p_out, __global uchar *m_out,
                          __global uchar *v_out, __constant float *coef, const int steps, const long n,
                          const float decay, const float one_minus_beta1, const float beta2,
                          const float one_minus_beta2, const float eps, const int dt) {
    const size_t i = get_global_id(0);
    if (i >= (size_t)n) return;
    float p = load_elem(param, i, dt), m = load_elem(m_in, i, dt), v = load_elem(v_in, i, dt);
    for (int k = 0; k < steps; k++) {
        const float g = load_elem(grads, (size_t)k * n + i, dt);
        p *= decay;                                   // param.mul_(1 - lr * weight_decay)
        m = m + one_minus_beta1 * (g - m);            // exp_avg.lerp_(grad, 1 - beta1)
        v = v * beta2 + one_minus_beta2 * g * g;      // exp_avg_sq.mul_(beta2).addcmul_(g, g, 1 - beta2)
        p = p - coef[2 * k] * m / (sqrt(v) * coef[2 * k + 1] + eps);
    }
    store_elem(p_out, i, p, dt);
    store_elem(m_out, i, m, dt);
    store_elem(v_out, i, v, dt);
}
"""

WG = 256
DTYPE_CODE = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.uint16): 2}


def kernel_function(prog, queue, param, grads, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay):
    steps = grads.shape[0]
    n = param.size
    coef = []
    for k in range(steps):
        t = step + 1 + k
        coef += [lr / (1.0 - beta1 ** t), 1.0 / math.sqrt(1.0 - beta2 ** t)]
    coef_dev = cla.to_device(queue, np.array(coef or [0.0], dtype=np.float32))
    p_out, m_out, v_out = cla.empty_like(param), cla.empty_like(exp_avg), cla.empty_like(exp_avg_sq)
    if n:
        prog.adamw_steps(queue, (-(-n // WG) * WG,), (WG,), param.data, grads.data, exp_avg.data, exp_avg_sq.data,
                         p_out.data, m_out.data, v_out.data, coef_dev.data, np.int32(steps), np.int64(n),
                         np.float32(1.0 - lr * weight_decay), np.float32(1.0 - beta1), np.float32(beta2),
                         np.float32(1.0 - beta2), np.float32(eps), np.int32(DTYPE_CODE[param.dtype]))
    return p_out, m_out, v_out
