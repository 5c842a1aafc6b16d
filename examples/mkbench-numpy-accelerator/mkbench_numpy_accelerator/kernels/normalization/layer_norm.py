"""F.layer_norm over the last dim with weight and bias, eps=1e-5.

Two passes in float64 (mean, then the variance of the centred values): the task's rows sit at
mean 100 with std 1, where a one-pass E[x^2] - E[x]^2 variance in float32 is visibly wrong.
"""

import numpy as np

EPS = 1e-5


def kernel_function(x, weight, bias):
    x64 = x.astype(np.float64)
    centred = x64 - x64.mean(axis=-1, keepdims=True)
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    y = centred / np.sqrt(var + EPS) * weight.astype(np.float64) + bias.astype(np.float64)
    return y.astype(x.dtype)
