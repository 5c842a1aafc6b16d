"""torch.sum(x, dim=-1): a float64 (pairwise) accumulation, rounded once to the input dtype."""

import numpy as np


def kernel_function(x):
    return x.sum(axis=-1, dtype=np.float64).astype(x.dtype)
